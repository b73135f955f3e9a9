import type { TokenStore } from './token-store.js';

/** Work for one id, run while no other work for that id runs. */
export type InTurn = <R>(id: string, work: () => Promise<R>) => Promise<R>;

/** Turns within one process: each piece of work for an id waits for the one queued before it. */
export class Turns {
  /** Per id, the end of the last piece of work queued. */
  readonly #queues = new Map<string, Promise<void>>();

  /** Whether work for this id is running or queued. */
  busy(id: string): boolean {
    return this.#queues.has(id);
  }

  async run<R>(id: string, work: () => Promise<R>): Promise<R> {
    const before = this.#queues.get(id) ?? Promise.resolve();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const end = before.then(() => released);
    this.#queues.set(id, end);
    await before;
    try {
      return await work();
    } finally {
      release();
      if (this.#queues.get(id) === end) this.#queues.delete(id);
    }
  }
}

/**
 * The store's own turns (across every instance sharing it) when it offers them, else turns within
 * this process: a store without `exclusive` still never has a logout and a refresh of one session
 * interleave in the instance that runs them.
 */
export function turnsOf<T>(store: TokenStore<T>): InTurn {
  if (store.exclusive !== undefined) return store.exclusive.bind(store);
  const turns = new Turns();
  return (id, work) => turns.run(id, work);
}
