// How fast a client must read the app's answer. A client that reads slowly slows the app's answer
// down (the forwarder pauses it) instead of filling memory, but no slower than a minimum rate once
// a grace period is over: a client that reads a byte now and then would otherwise hold a connection
// to the app for as long as the answer lasts.
import type { ServerResponse } from 'node:http';

import { MAX_TIMER_MS } from '../timer-limit.js';

/** The slowest a client may read an answer the app has ready (Kestrel's default minimum response data rate). */
export const MIN_DOWNLOAD_BYTES_PER_SECOND = 240;
/** How long any wait for a client to read may last before the minimum applies. */
export const DOWNLOAD_RATE_GRACE_MS = 5_000;

/** How fast a client must read the app's answer while it is held back for it. */
export interface DownloadRate {
  readonly bytesPerSecond: number;
  readonly graceMs: number;
}

export const DEFAULT_DOWNLOAD_RATE: DownloadRate = {
  bytesPerSecond: MIN_DOWNLOAD_BYTES_PER_SECOND,
  graceMs: DOWNLOAD_RATE_GRACE_MS,
};

/**
 * Waits for `res` to drain what is waiting in it, then calls `resume`. What is waiting must be read
 * within the grace period plus its size at the minimum rate; else `onSlowReader` is told and the
 * connection is closed (and the app's request with it).
 */
export function awaitDrain(
  res: ServerResponse,
  rate: DownloadRate,
  onSlowReader: () => void,
  resume: () => void,
): void {
  const limitMs = Math.min(rate.graceMs + (res.writableLength * 1000) / rate.bytesPerSecond, MAX_TIMER_MS);
  const tooSlow = setTimeout(() => {
    onSlowReader();
    res.destroy();
  }, limitMs);
  res.once('drain', () => {
    clearTimeout(tooSlow);
    resume();
  });
}
