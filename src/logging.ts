import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Structured JSON logs on stdout. Level from GATEHOUSE_LOG_LEVEL (default
 * info; `silent` turns logging off). Callers never pass secrets, tokens or
 * request bodies to a logger.
 */
export function createLogger(level: string = process.env.GATEHOUSE_LOG_LEVEL ?? 'info'): Logger {
  return pino({ name: 'gatehouse', level, base: { service: 'gatehouse' } });
}
