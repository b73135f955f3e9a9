// The workers of `gatehouse serve --workers` share the token store directory.
// Each tells the others, through the primary, of every record it wrote or
// removed, so that a logout on one worker is honoured by every other from its
// next request (as Redis' channel does between hosts), instead of after their
// cached copy runs out.
import type { ChangeNotice, PublishingChannel } from '../core/token-store/change-channel.js';

const CHANGE = 'gatehouse:store-change';

interface ChangeMessage {
  readonly type: typeof CHANGE;
  readonly notice: ChangeNotice;
}

export function isChangeMessage(message: unknown): message is ChangeMessage {
  const candidate = message as Partial<ChangeMessage> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    candidate.type === CHANGE &&
    typeof candidate.notice?.kind === 'string' &&
    typeof candidate.notice.name === 'string'
  );
}

/** In a worker: the channel to the other workers, over the IPC connection to the primary. */
export class WorkerChannel implements PublishingChannel {
  readonly #listeners = new Set<(notice: ChangeNotice | undefined) => void>();

  constructor() {
    process.on('message', (message: unknown) => {
      if (!isChangeMessage(message)) return;
      for (const listener of this.#listeners) listener(message.notice);
    });
    // The primary is gone: nothing more will be heard, and nothing cached may be trusted.
    process.once('disconnect', () => {
      for (const listener of this.#listeners) listener(undefined);
    });
  }

  publish(notice: ChangeNotice): void {
    if (process.connected) process.send!({ type: CHANGE, notice } satisfies ChangeMessage);
  }

  onChange(listener: (notice: ChangeNotice | undefined) => void): void {
    this.#listeners.add(listener);
  }

  get watching(): boolean {
    return process.connected;
  }
}
