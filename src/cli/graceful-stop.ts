// How a running command stops: on SIGINT or SIGTERM (or the primary's word to a worker), the
// requests in progress may finish for a grace period, then what was started closes and the
// process exits once its logs are out.
import { flushLogs, type Logger } from '../logging.js';
import type { Listening } from '../sidecar/listen.js';

/** How long a stop (SIGTERM from an orchestrator, Ctrl-C) waits for requests in progress. */
export const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Runs `stop` on the first SIGINT or SIGTERM, then exits once the logs are out; a second signal
 * exits at once. Installed before the listening line is printed: whoever waits for that line
 * (a supervisor, a test) may signal at once, and must get a graceful stop, not node's default kill.
 * Returns what starts the same stop without a signal (a worker asked by the primary); asked again,
 * it changes nothing.
 */
export function stopOn(logger: Logger, stop: () => Promise<void>): () => void {
  let stopping = false;
  const begin = (): void => {
    if (stopping) return;
    stopping = true;
    const exit = (code: number) => () => flushLogs(logger).then(() => process.exit(code));
    stop().then(exit(0), exit(1));
  };
  const onSignal = (): void => {
    if (stopping) process.exit(1);
    begin();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return begin;
}

/** A graceful stop of a listening server: requests in progress may finish, for SHUTDOWN_GRACE_MS at most. */
export async function drain(listening: Pick<Listening, 'drain'>, logger: Logger): Promise<void> {
  logger.info({ graceMs: SHUTDOWN_GRACE_MS }, 'stopping: no new connections; requests in progress may finish');
  const finished = await listening.drain(SHUTDOWN_GRACE_MS);
  if (finished) logger.info('stopped');
  else
    logger.warn({ graceMs: SHUTDOWN_GRACE_MS }, 'stopped: connections still open after the grace period were closed');
}

/** How to stop a started server gracefully, and what else to close when it stops. */
export interface Stoppable {
  readonly stop: () => void;
  onStop(then: () => Promise<void>): void;
}

/** stopOn, with more to close after `stop` (a metrics listener started later). */
export function stoppable(logger: Logger, stop: () => Promise<void>): Stoppable {
  const after: Array<() => Promise<void>> = [];
  const begin = stopOn(logger, async () => {
    await stop();
    for (const close of after) await close();
  });
  return { stop: begin, onStop: (then) => void after.push(then) };
}
