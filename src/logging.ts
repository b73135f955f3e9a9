import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Structured JSON logs on stdout, or appended to `file` (the in-server mode:
 * a web server's worker process has no console). Level from GATEHOUSE_LOG_LEVEL (default
 * info; `silent` turns logging off). Callers never pass secrets, tokens or
 * request bodies to a logger.
 *
 * Writes are asynchronous (a log line never blocks a request on the
 * terminal or pipe); pino flushes what is pending when the process exits.
 */
export function createLogger(level: string = process.env.GATEHOUSE_LOG_LEVEL ?? 'info', file?: string): Logger {
  return pino({ name: 'gatehouse', level, base: { service: 'gatehouse' } }, pino.destination({ dest: file ?? 1, sync: false, ...(file ? { mkdir: true } : {}) }));
}
