import type { Identity } from '../identity.js';
import type { ForwardEdits } from './forward-edits.js';
import type { Origin } from './origin.js';

/** What a host tells the core about one request (docs/architecture.md#the-decision). */
export interface RequestView {
  readonly method: string;
  /** Raw path, not decoded, without the query. */
  readonly path: string;
  /** Raw query without the leading `?` ('' when none). */
  readonly query: string;
  /** As received, in order. */
  readonly headers: ReadonlyArray<readonly [name: string, value: string]>;
  readonly scheme: 'http' | 'https';
  readonly host: string;
  readonly remoteAddress: string;
  /**
   * The body, for /.auth/* POSTs only. Rejects with BodyTooLargeError past `limit` bytes,
   * with BodyTimeoutError when the host's deadline for the whole body passes first, with
   * another error when the body cannot be read (the client went away).
   */
  readonly readBody: (limit: number) => Promise<Buffer>;
}

/**
 * The largest body an /.auth POST takes: a form_post callback, a token exchange, a back-channel
 * logout (a few KB of tokens each). A host need never hold more than one byte beyond it; the IIS
 * module reads no more (kMaxAuthBody in binding/iis/gatehouse_module.cpp, kept equal by a test).
 */
export const MAX_AUTH_BODY_BYTES = 64 * 1024;

/** What readBody rejects with when the body is over its limit: the caller answers 413. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`body over ${limit} bytes`);
  }
}

/**
 * What readBody rejects with when the whole body has not arrived by the host's deadline: the
 * caller answers 408 and closes the connection (TIMED_OUT_BODY_HEADERS), whose unread rest would
 * otherwise still have to be received before another request could follow on it.
 */
export class BodyTimeoutError extends Error {
  constructor(readonly deadlineMs: number) {
    super(`body not received within ${deadlineMs} ms`);
  }
}

/** The headers of the 408 that answers a BodyTimeoutError. */
export const TIMED_OUT_BODY_HEADERS: Readonly<Record<string, string>> = { Connection: 'close' };

/** Why a body was not taken: the status to answer, the reason in the client's and the log's words ("the body …"), and headers. */
export interface BodyRefusal {
  readonly status: 400 | 408 | 413;
  readonly reason: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The body of an /.auth/* POST, at most `limit` bytes, or why it was not taken: over the limit, too slow, or broken off. */
export async function readBoundedBody(
  view: RequestView,
  limit: number,
): Promise<{ readonly body: Buffer } | BodyRefusal> {
  try {
    return { body: await view.readBody(limit) };
  } catch (error) {
    if (error instanceof BodyTooLargeError) return { status: 413, reason: `the body is larger than ${limit} bytes` };
    if (error instanceof BodyTimeoutError)
      return { status: 408, reason: 'the body did not arrive in time', headers: TIMED_OUT_BODY_HEADERS };
    return { status: 400, reason: 'the body could not be read' };
  }
}

/** A reason ("the body …") as a sentence of its own. */
export function asSentence(reason: string): string {
  return `${reason.charAt(0).toUpperCase()}${reason.slice(1)}.`;
}

export type Decision =
  | {
      readonly kind: 'forward';
      readonly identity: Identity | null;
      /** The origin the request was judged by (X-Forwarded-Host/-Proto come from it). */
      readonly origin: Origin;
      /** Every header edit the app's copy gets (forward-edits.ts): hosts apply it, and add nothing of their own. */
      readonly edits: ForwardEdits;
      /**
       * The longest, in seconds, a web server may keep this decision as the verify endpoint's answer
       * for the same credentials, host, path, method and upgrade (docs/forward-auth.md#caching-verify-answers).
       * It only narrows gatehouse.verifyCache: 0 for a decision that must be made on every request
       * (a path whose rules differ by method); absent, no bound of its own.
       */
      readonly cacheableForSeconds?: number;
    }
  | {
      readonly kind: 'respond';
      readonly status: number;
      /** Header names to values; `Set-Cookie` may hold several. */
      readonly headers: Readonly<Record<string, string | readonly string[]>>;
      readonly body?: Buffer;
    };

/** A decision that answers the request itself. */
export type RespondDecision = Extract<Decision, { kind: 'respond' }>;

/** A forward as the layer's routes decide it, before the header edits are added to it. */
export interface ForwardVerdict {
  readonly kind: 'forward';
  readonly identity: Identity | null;
}

/** What the layer's routes decide: an answer, or a forward (AuthLayer.decide adds the edits). */
export type Verdict = RespondDecision | ForwardVerdict;

/** The body's media type: Content-Type without its parameters, lower case ('' when absent). */
export function mediaType(request: Pick<RequestView, 'headers'>): string {
  return (headerValue(request, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

/** First value of a header, case-insensitive. */
export function headerValue(request: Pick<RequestView, 'headers'>, name: string): string | undefined {
  const lower = name.toLowerCase();
  // The length check first: most names differ in length, and it spares lowercasing them.
  for (const [n, v] of request.headers) if (n.length === lower.length && n.toLowerCase() === lower) return v;
  return undefined;
}

/**
 * Every cookie of every Cookie header, in the order sent: `visit` gets each name (trimmed) and
 * where its value lies in `header`, and stops the scan by returning true. Pair by pair with
 * indexOf: no array of pairs, and a value is sliced only by a visitor that wants it.
 */
export function scanCookies(
  request: Pick<RequestView, 'headers'>,
  visit: (name: string, header: string, valueStart: number, valueEnd: number) => boolean,
): void {
  for (const [n, v] of request.headers) {
    if (n.length !== 6 || n.toLowerCase() !== 'cookie') continue; // every Cookie header counts
    for (let start = 0; start < v.length;) {
      const semicolon = v.indexOf(';', start);
      const end = semicolon < 0 ? v.length : semicolon;
      const eq = v.indexOf('=', start);
      if (eq > start && eq < end && visit(v.slice(start, eq).trim(), v, eq + 1, end)) return;
      start = end + 1;
    }
  }
}

/** One cookie's value (the first occurrence), without building the whole cookie map. */
export function requestCookie(request: Pick<RequestView, 'headers'>, name: string): string | undefined {
  let value: string | undefined;
  scanCookies(request, (candidate, header, from, to) => {
    if (candidate !== name) return false;
    value = header.slice(from, to).trim();
    return true;
  });
  return value;
}

/** Every cookie whose name starts with `prefix` (and is longer), in the order sent. */
export function requestCookiesByPrefix(
  request: Pick<RequestView, 'headers'>,
  prefix: string,
): Array<{ readonly name: string; readonly value: string }> {
  const found: Array<{ name: string; value: string }> = [];
  scanCookies(request, (name, header, from, to) => {
    if (name.length > prefix.length && name.startsWith(prefix))
      found.push({ name, value: header.slice(from, to).trim() });
    return false;
  });
  return found;
}

/**
 * A caller that wants JSON rather than a page: an `Accept` without
 * `text/html`, or an XMLHttpRequest. Such callers get 401 instead of a redirect.
 */
export function wantsJson(request: Pick<RequestView, 'headers'>): boolean {
  if ((headerValue(request, 'x-requested-with') ?? '').toLowerCase() === 'xmlhttprequest') return true;
  const accept = headerValue(request, 'accept');
  return accept !== undefined && accept !== '' && !accept.toLowerCase().includes('text/html');
}
