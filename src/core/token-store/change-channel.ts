// How instances sharing a store tell each other what they changed, whatever
// carries the notices (Redis pub/sub between hosts, the cluster's IPC between
// the workers of one host): each store turns them into its StoreChanges.
import type { StoreChanges } from './token-store.js';

/** A change another instance made, as the channel carries it. */
export interface ChangeNotice {
  /** Which store (`session`, `signout`). */
  readonly kind: string;
  /** The record's name in that store. */
  readonly name: string;
}

export interface ChangeChannel {
  /** `listener` hears other instances' changes, and `undefined` whenever some may have been missed. */
  onChange(listener: (notice: ChangeNotice | undefined) => void): void;
  /** Whether other instances' notices are arriving now. */
  readonly watching: boolean;
}

/** A channel on which the store itself sends its notices (a store whose writes cannot publish in the same step, as Redis' scripts do). */
export interface PublishingChannel extends ChangeChannel {
  publish(notice: ChangeNotice): void;
}

/** One store's view of a channel: the notices of its kind, by name. */
export function changesOf(channel: ChangeChannel, kind: string, nameOf: (id: string) => string): StoreChanges {
  return {
    nameOf,
    onChange: (listener) =>
      channel.onChange((notice) =>
        notice === undefined ? listener(undefined) : notice.kind === kind && listener(notice.name),
      ),
    get watching() {
      return channel.watching;
    },
  };
}
