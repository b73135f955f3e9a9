// The access log, off unless asked for (GATEHOUSE_ACCESS_LOG=on, or the `accessLog` option): one
// line per request the server answered or forwarded, with who made it when gatehouse knows. Without
// it gatehouse logs only what the app never sees (refusals, challenges, sign-ins, sign-outs) and the
// app logs what it serves. Off, it costs the request path nothing: the listener is not wrapped.
//
// A line never holds the query (it may carry a code or a token), a header, a cookie or a body.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';

import type { Identity } from '../core/identity.js';
import type { Logger } from '../logging.js';
import { loggedPath } from './logged-path.js';

export const ACCESS_LOG_VARIABLE = 'GATEHOUSE_ACCESS_LOG';

const ON = new Set(['on', 'true', '1']);
const OFF = new Set(['off', 'false', '0']);

/**
 * Whether the access log is on: `option`, else GATEHOUSE_ACCESS_LOG (`on`/`off`, also
 * `true`/`false`, `1`/`0`, in any case, blanks around ignored; empty counts as unset), else off.
 * Anything else is a TypeError naming the variable: a typo must not leave it silently off.
 */
export function resolveAccessLog(option: boolean | undefined, env: NodeJS.ProcessEnv): boolean {
  if (option !== undefined) return option;
  const raw = env[ACCESS_LOG_VARIABLE];
  const value = (raw ?? '').trim().toLowerCase();
  if (value === '' || OFF.has(value)) return false;
  if (ON.has(value)) return true;
  throw new TypeError(`${ACCESS_LOG_VARIABLE} must be on or off (got ${JSON.stringify(raw)})`);
}

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

interface InFlight {
  readonly started: number;
  readonly forwardedFor: string | undefined;
  identity?: Identity;
}

/** Longer than any address a proxy writes (an IPv6 address with brackets and a port is at most 53 characters). */
const MAX_ADDRESS_LENGTH = 64;

/**
 * The address the trusted proxy in front saw the request come from: the last entry of the
 * X-Forwarded-For it received (each proxy appends its peer; entries before it are the client's own
 * claims). Undefined when there is none, or when it is too long to be an address.
 */
function lastForwardedFor(value: string | string[] | undefined): string | undefined {
  const chain = Array.isArray(value) ? value.join(',') : value;
  if (chain === undefined) return undefined;
  const last = chain.slice(chain.lastIndexOf(',') + 1).trim();
  return last !== '' && last.length <= MAX_ADDRESS_LENGTH ? last : undefined;
}

export interface AccessLogOptions {
  /** A proxy gatehouse trusts is in front (`forwardProxy.convention` other than NoProxy): log the address it saw. */
  readonly trustForwardedFor?: boolean;
}

export class AccessLog {
  readonly #logger: Logger;
  readonly #trustForwardedFor: boolean;
  readonly #inFlight = new WeakMap<IncomingMessage, InFlight>();

  constructor(logger: Logger, options: AccessLogOptions = {}) {
    this.#logger = logger;
    this.#trustForwardedFor = options.trustForwardedFor ?? false;
  }

  /** `listener`, with a line for each request once its answer is written, or once the client left before that. */
  wrap(listener: Listener): Listener {
    return (req, res) => {
      this.begin(req);
      // Both events: 'close' alone misses a response served on a connection an upgrade handed over
      // (upgrades.ts), detached from its socket once finished, which never sees 'close'; 'finish'
      // alone misses a client that left before the answer was written. After 'finish', the
      // 'close' that usually follows finds the line written (end writes it once).
      res.once('finish', () => this.end(req, res.statusCode, true));
      res.once('close', () => this.end(req, res.headersSent ? res.statusCode : undefined, false));
      listener(req, res);
    };
  }

  /** A request starts: its duration is counted from here. (wrap calls it; WebSocket handshakes call it themselves.) */
  begin(req: IncomingMessage): void {
    // Read now: a forwarded request's headers are replaced by what the app gets, gatehouse's own entry appended.
    const forwardedFor = this.#trustForwardedFor ? lastForwardedFor(req.headers['x-forwarded-for']) : undefined;
    this.#inFlight.set(req, { started: performance.now(), forwardedFor });
  }

  /** Who made the request, once the auth layer decided to forward it with an identity. */
  identify(req: IncomingMessage, identity: Identity): void {
    const entry = this.#inFlight.get(req);
    if (entry !== undefined) entry.identity = identity;
  }

  /**
   * Writes the request's line, once: completed, with the status the client got; or aborted (the
   * client left, or the connection was cut, before a whole answer), with the status of the answer
   * begun, if any. Later calls for the same request do nothing.
   */
  end(req: IncomingMessage, status: number | undefined, completed: boolean): void {
    const entry = this.#inFlight.get(req);
    if (entry === undefined) return;
    this.#inFlight.delete(req);
    const line = {
      method: req.method,
      path: loggedPath(req),
      ...(status !== undefined ? { status } : {}),
      durationMs: Math.round((performance.now() - entry.started) * 1000) / 1000,
      remoteAddress: req.socket.remoteAddress,
      ...(entry.forwardedFor !== undefined ? { forwardedFor: entry.forwardedFor } : {}),
      ...(entry.identity !== undefined ? { userId: entry.identity.userId, idp: entry.identity.provider } : {}),
    };
    this.#logger.info(line, completed ? 'request completed' : 'request aborted');
  }
}
