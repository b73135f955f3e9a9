// How long the app may stay silent on a request: `upstreamTimeoutMs`, else the environment's
// GATEHOUSE_UPSTREAM_TIMEOUT_MS, else 60 s. An app that streams (server-sent events, long
// polling) and may stay silent longer than that between two writes needs it raised.
import { MAX_TIMER_MS } from '../timer-limit.js';
import { wholeNumber } from '../whole-number.js';

/** How long the app may stay silent (no answer, no bytes) before the request fails with 504. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 60_000;

/** Clients may stay silent a little longer than the app may: a request waiting on a slow app gets its 504 first. */
export const CLIENT_IDLE_MARGIN_MS = 5_000;

/** The longest upstream timeout: the client's idle timeout, this plus the margin, must still fit in a timer. */
export const MAX_UPSTREAM_TIMEOUT_MS = MAX_TIMER_MS - CLIENT_IDLE_MARGIN_MS;

export const UPSTREAM_TIMEOUT_VARIABLE = 'GATEHOUSE_UPSTREAM_TIMEOUT_MS';

/**
 * The upstream timeout in ms, or a TypeError naming where a bad value came from. An empty
 * variable counts as unset. No "0 means none": an app that may stay silent for days gets a large value.
 */
export function resolveUpstreamTimeout(option: number | undefined, env: NodeJS.ProcessEnv): number {
  const fromEnv = env[UPSTREAM_TIMEOUT_VARIABLE];
  const [source, value] =
    option !== undefined
      ? ['upstreamTimeoutMs', option]
      : [UPSTREAM_TIMEOUT_VARIABLE, fromEnv === '' ? undefined : fromEnv];
  if (value === undefined) return DEFAULT_UPSTREAM_TIMEOUT_MS;
  const ms = wholeNumber(value);
  if (!Number.isSafeInteger(ms) || ms < 1 || ms > MAX_UPSTREAM_TIMEOUT_MS) {
    throw new TypeError(
      `${source} must be a whole number of milliseconds, 1-${MAX_UPSTREAM_TIMEOUT_MS} (got ${JSON.stringify(value)})`,
    );
  }
  return ms;
}
