// `gatehouse serve --workers N`: the primary process forks N workers
// (node:cluster), which share the listening port (the primary hands each new
// connection to the next worker) and their state through the store (Redis, or
// the token store directory, whose changes the primary relays between them).
// A worker that dies is replaced, and said; a stop stops them all gracefully
// and together.
import cluster, { type Worker } from 'node:cluster';
import { setTimeout as delay } from 'node:timers/promises';

import type { Logger } from '../logging.js';
import { isChangeMessage } from './worker-channel.js';

const LISTENING = 'gatehouse:listening';
const STOP = 'gatehouse:stop';

/** What a worker tells the primary once it serves: where, and what its receiver says at start. */
export interface WorkerListening {
  readonly type: typeof LISTENING;
  readonly url: string;
  readonly announcement: readonly string[];
}

/** A worker that lived at least this long before it died is replaced at once; one that died sooner, after a growing pause. */
const STABLE_MS = 10_000;
const REPLACE_PAUSE_MAX_MS = 30_000;

export interface RunningWorkers {
  /** The URL the workers listen on, and the lines the first of them had to say at start. */
  readonly listening: WorkerListening;
  /** Asks every worker to stop gracefully; resolves when they all have exited (the stragglers killed after `graceMs` more). */
  stop(graceMs: number): Promise<void>;
}

function isListening(message: unknown): message is WorkerListening {
  return (message as Partial<WorkerListening> | null)?.type === LISTENING;
}

/** In a worker: tells the primary it serves. */
export function reportListening(url: string, announcement: readonly string[]): void {
  process.send?.({ type: LISTENING, url, announcement } satisfies WorkerListening);
}

/** In a worker: runs `stop` when the primary asks, or when the primary is gone. */
export function stopWhenPrimaryAsks(stop: () => void): void {
  process.on('message', (message: unknown) => (message as { type?: string } | null)?.type === STOP && stop());
  process.once('disconnect', stop);
}

export async function startWorkers(count: number, logger: Logger): Promise<RunningWorkers> {
  let stopping = false;
  let pauseMs = 500;
  /** Relays a worker's store changes to every other worker. */
  const relay = (from: Worker) => (message: unknown) => {
    if (!isChangeMessage(message)) return;
    for (const worker of Object.values(cluster.workers ?? {}))
      if (worker !== undefined && worker !== from && worker.isConnected()) worker.send(message);
  };
  const fork = (): { worker: Worker; listening: Promise<WorkerListening> } => {
    const worker = cluster.fork();
    worker.on('message', relay(worker));
    const listening = new Promise<WorkerListening>((resolve, reject) => {
      worker.on('message', (message: unknown) => isListening(message) && resolve(message));
      worker.once('exit', (code, signal) =>
        reject(new Error(`a worker stopped before it served (${signal ?? `exit code ${code}`})`)),
      );
    });
    listening.catch(() => undefined); // a replacement that fails is said by its exit
    const started = Date.now();
    worker.once('exit', (code, signal) => {
      if (stopping) return;
      const lived = Date.now() - started;
      pauseMs = lived >= STABLE_MS ? 0 : Math.min(Math.max(pauseMs * 2, 1_000), REPLACE_PAUSE_MAX_MS);
      logger.error(
        { worker: worker.id, pid: worker.process.pid, code, signal, livedMs: lived, replaceInMs: pauseMs },
        'worker died: starting a replacement',
      );
      void delay(pauseMs).then(() => {
        if (stopping) return;
        const replacement = fork();
        replacement.listening.then(
          () =>
            logger.info(
              { worker: replacement.worker.id, pid: replacement.worker.process.pid },
              'replacement worker serving',
            ),
          () => undefined,
        );
      });
    });
    return { worker, listening };
  };

  const first = Array.from({ length: count }, fork);
  let listening: WorkerListening;
  try {
    [listening] = (await Promise.all(first.map((started) => started.listening))) as [WorkerListening];
  } catch (error) {
    // One could not start (its own error is on stderr): the others stop too, and the start fails.
    stopping = true;
    for (const { worker } of first) if (!worker.isDead()) worker.process.kill('SIGKILL');
    throw error;
  }
  logger.info({ workers: count, pids: first.map(({ worker }) => worker.process.pid) }, 'workers serving');

  return {
    listening,
    stop: async (graceMs) => {
      stopping = true;
      const workers = Object.values(cluster.workers ?? {}).filter(
        (worker): worker is Worker => worker !== undefined && !worker.isDead(),
      );
      const exited = workers.map(
        (worker) => new Promise((resolve) => (worker.isDead() ? resolve(undefined) : worker.once('exit', resolve))),
      );
      for (const worker of workers) if (worker.isConnected()) worker.send({ type: STOP });
      const killer = setTimeout(() => {
        for (const worker of workers) if (!worker.isDead()) worker.process.kill('SIGKILL');
      }, graceMs + 5_000);
      await Promise.all(exited);
      clearTimeout(killer);
    },
  };
}
