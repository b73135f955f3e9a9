import { createRequire } from 'node:module';

import { pino, type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';

import { logFormatFromEnv, type LogFormat } from './log-format.js';
import { logLevelFromEnv, parseLogLevel } from './log-level.js';

export type { Logger } from 'pino';

type Destination = ReturnType<typeof pino.destination> | PinoPretty.PrettyStream;

/** Each logger's destination, for flushLogs. */
const destinations = new WeakMap<Logger, Destination>();

/**
 * Logs on stdout, or appended to `file` (the in-server mode: a web server's worker process has no
 * console). On stdout, `format` (else GATEHOUSE_LOG_FORMAT, else readable lines on a terminal and
 * JSON lines anywhere else); a file always gets JSON. Level `level`, else GATEHOUSE_LOG_LEVEL
 * (default info; `silent` turns logging off); an unknown level or format is a TypeError naming
 * it. Callers never pass secrets, tokens or request bodies to a logger.
 *
 * Writes are asynchronous (a log line never blocks a request on the
 * terminal or pipe); before exiting, call flushLogs to write what is pending.
 */
export function createLogger(level?: string, file?: string, format?: LogFormat): Logger {
  // Before the destination is opened: a bad level must not leave a file or descriptor behind.
  const resolved = level === undefined ? logLevelFromEnv() : parseLogLevel(level, 'the log level');
  const pretty = file === undefined && (format ?? logFormatFromEnv()) === 'pretty';
  const destination = pretty
    ? readableLines()
    : pino.destination({ dest: file ?? 1, sync: false, ...(file ? { mkdir: true } : {}) });
  const logger = pino({ name: 'gatehouse', level: resolved, base: { service: 'gatehouse' } }, destination);
  destinations.set(logger, destination);
  return logger;
}

/**
 * pino-pretty in this process (no transport thread: a terminal's output is small): local times,
 * colour when the terminal has it, and none of the fields every line repeats.
 */
function readableLines(): PinoPretty.PrettyStream {
  // Loaded only when asked for (a CommonJS module, required synchronously: createLogger is).
  const build = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  return build({
    destination: 1,
    sync: false,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service,name',
  });
}

/** How long flushLogs waits for the log destination to take what is pending. */
const FLUSH_WITHIN_MS = 2_000;

/**
 * Writes out what the logger still holds, then ends its destination: call it last, just before
 * process.exit. Exiting with a write still under way leaves the rest to pino's exit hook, whose
 * synchronous flush retries forever when the reader of stdout is gone (EPIPE: a log shipper
 * that died, `| head`), so the process would hang there, deaf to signals. Ending asynchronously
 * lets that write fail first, which turns the logger into a no-op. Bounded by FLUSH_WITHIN_MS
 * for a reader that is alive but not reading.
 */
export function flushLogs(logger: Logger): Promise<void> {
  const destination = destinations.get(logger);
  if (destination === undefined) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, FLUSH_WITHIN_MS);
    destination.once('close', done).once('error', done);
    destination.end();
  });
}
