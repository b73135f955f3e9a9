// How much of the app gatehouse may hold at once: connections to it, and requests waiting for
// one. Both are bounded so that clients who start requests and leave them (or an app that
// stalls) cannot grow memory or delay without limit: past the bound, 503 with Retry-After.
// `upstreamConnections` / `upstreamQueue` / `upstreamWebSockets`, else GATEHOUSE_UPSTREAM_CONNECTIONS /
// GATEHOUSE_UPSTREAM_QUEUE / GATEHOUSE_UPSTREAM_WEBSOCKETS, else the defaults below.
import { wholeNumber } from '../whole-number.js';

export const DEFAULT_UPSTREAM_CONNECTIONS = 512;
export const DEFAULT_UPSTREAM_QUEUE = 1024;
/** Open WebSocket connections to the app at most (Envoy's default circuit breaker for connections is the same). */
export const DEFAULT_UPSTREAM_WEBSOCKETS = 1024;
const MAX_LIMIT = 1_000_000;

export interface UpstreamLimits {
  readonly connections: number;
  readonly queue: number;
  /** WebSocket connections, each holding a connection to the app of its own for as long as it is open. */
  readonly webSockets: number;
}

function resolveOne(
  option: number | undefined,
  variable: string,
  optionName: string,
  fallback: number,
  min: number,
  env: NodeJS.ProcessEnv,
): number {
  const fromEnv = env[variable];
  const [source, value] =
    option !== undefined ? [optionName, option] : [variable, fromEnv === '' ? undefined : fromEnv];
  if (value === undefined) return fallback;
  const n = wholeNumber(value);
  if (!Number.isSafeInteger(n) || n < min || n > MAX_LIMIT) {
    throw new TypeError(`${source} must be a whole number, ${min}-${MAX_LIMIT} (got ${JSON.stringify(value)})`);
  }
  return n;
}

/** The limits in force, or a TypeError naming where a bad value came from. */
export function resolveUpstreamLimits(
  options: { connections?: number | undefined; queue?: number | undefined; webSockets?: number | undefined },
  env: NodeJS.ProcessEnv,
): UpstreamLimits {
  return {
    connections: resolveOne(
      options.connections,
      'GATEHOUSE_UPSTREAM_CONNECTIONS',
      'upstreamConnections',
      DEFAULT_UPSTREAM_CONNECTIONS,
      1,
      env,
    ),
    queue: resolveOne(options.queue, 'GATEHOUSE_UPSTREAM_QUEUE', 'upstreamQueue', DEFAULT_UPSTREAM_QUEUE, 0, env),
    webSockets: resolveOne(
      options.webSockets,
      'GATEHOUSE_UPSTREAM_WEBSOCKETS',
      'upstreamWebSockets',
      DEFAULT_UPSTREAM_WEBSOCKETS,
      0,
      env,
    ),
  };
}
