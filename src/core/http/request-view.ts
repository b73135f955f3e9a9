// The request as the core reads it (docs/architecture.md#the-decision): what a host tells the core
// about it, its headers and cookies by name, the origin it is judged by, its body for the /.auth
// POSTs, and the decision the core answers it with.
import type { AuthConfig } from '../config/auth-config.js';
import type { Identity } from '../identity.js';
import type { ForwardEdits } from './header-policy.js';

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

// ---- The origin
//
// The origin the browser used, for callback URLs and HTTPS checks. Forwarded
// headers count only when httpSettings.forwardProxy says a proxy sets them;
// otherwise a client could pick the host our redirects point to.

export interface Origin {
  readonly scheme: 'http' | 'https';
  readonly host: string;
}

const HOST =
  /^((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?|\[[0-9A-Fa-f:.]+\]))(?::(\d{1,5}))?$/;
const MAX_PORT = 65535;

function firstValue(value: string | undefined): string | undefined {
  const first = value?.split(',')[0]?.trim();
  return first === '' ? undefined : first;
}

/** The request's origin, or null when the host is not a syntactically valid host[:port]. */
export function requestOrigin(request: RequestView, config: Pick<AuthConfig, 'forwardProxy'>): Origin | null {
  let host = request.host;
  let scheme: string = request.scheme;
  const proxy = config.forwardProxy;
  if (proxy.convention === 'Standard') {
    host = firstValue(headerValue(request, 'x-forwarded-host')) ?? host;
    scheme = firstValue(headerValue(request, 'x-forwarded-proto')) ?? scheme;
  } else if (proxy.convention === 'Custom') {
    if (proxy.hostHeader) host = firstValue(headerValue(request, proxy.hostHeader)) ?? host;
    if (proxy.protoHeader) scheme = firstValue(headerValue(request, proxy.protoHeader)) ?? scheme;
  }
  // Consecutive requests nearly always name the same host: the last answer is reused for the same inputs.
  if (host === last.host && scheme === last.scheme) return last.origin;
  const origin = checkedOrigin(scheme, host);
  last = { host, scheme, origin };
  return origin;
}

let last: { readonly host: string; readonly scheme: string; readonly origin: Origin | null } = {
  host: '',
  scheme: '',
  origin: null,
};

function checkedOrigin(rawScheme: string, host: string): Origin | null {
  const scheme = rawScheme.toLowerCase();
  if ((scheme !== 'http' && scheme !== 'https') || host.length > 255) return null;
  const match = HOST.exec(host);
  if (match === null) return null;
  // A port outside 1-65535 is no address a browser could have used: refuse it rather than build callbacks to it.
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > MAX_PORT)) return null;
  // Written as a URL writes it (new URL('https://app.example:0443').host is 'app.example'): the scheme's own port
  // left out, no leading zeros, IPv6 and numeric IPv4 forms shortened. A proxy that sends `Host: app.example:443`
  // (nginx's `$host:$server_port`) must not make the callback URL https://app.example:443/…, which providers compare
  // as text with the registered one. A host the URL parser refuses (`256.1.1.1`, `[1::2::3]`, `1.2.3.4.5`) is none a
  // browser could have used, and no callback URL is built from it.
  try {
    return { scheme, host: new URL(`${scheme}://${host}`).host };
  } catch {
    return null;
  }
}

/** Whether a proxy gatehouse trusts is in front of it (it sets the forwarding headers; their X-Forwarded-For chain is kept). */
export function behindTrustedProxy(config: Pick<AuthConfig, 'forwardProxy'>): boolean {
  return config.forwardProxy.convention !== 'NoProxy';
}

export function originUrl(origin: Origin): string {
  return `${origin.scheme}://${origin.host}`;
}

/**
 * Whether browsers count `host` (an Origin's host: lower case, port optional) as this machine: a
 * page from it is a secure context even over plain http, so it may set `Secure` cookies.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    name === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)
  );
}

// ---- The body of an /.auth POST

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

// ---- The decision

export type Decision =
  | {
      readonly kind: 'forward';
      readonly identity: Identity | null;
      /** The origin the request was judged by (X-Forwarded-Host/-Proto come from it). */
      readonly origin: Origin;
      /** Every header edit the app's copy gets (header-policy.ts): hosts apply it, and add nothing of their own. */
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

// ---- Headers and cookies by name

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

/**
 * Whether a 401 serves the caller better than a redirect to a sign-in page:
 * an API call (wantsJson), or a WebSocket handshake, which cannot follow a redirect.
 */
export function callerWantsJson(view: Pick<RequestView, 'headers'>): boolean {
  return wantsJson(view) || headerValue(view, 'upgrade') !== undefined;
}

/**
 * The bearer token of `Authorization: Bearer <token>`, undefined when the header is absent or another scheme.
 * "Bearer" alone (servers trim the trailing space) is an empty token, not another scheme. The token itself is
 * not scanned here: whatever follows the scheme is the token, and anything that is not a signed JWT is refused
 * as one (401 invalid_token), so a malformed credential is never mistaken for no credential.
 */
export function bearerToken(request: { readonly view: Pick<RequestView, 'headers'> }): string | undefined {
  const header = headerValue(request.view, 'authorization');
  if (header === undefined || header.length < 6 || header.slice(0, 6).toLowerCase() !== 'bearer') return undefined;
  const rest = header.slice(6);
  if (rest.trim() === '') return '';
  // The scheme ends at a space ("Bearerish x" is another scheme).
  return rest.charCodeAt(0) === 0x20 ? rest.trim() : undefined;
}

// ---- The request with its origin

/** One request as the core judges it, and as the /.auth routes see it: the view plus its validated origin. */
export interface RouteRequest {
  readonly view: RequestView;
  readonly origin: Origin;
  readonly secure: boolean;
  readonly json: boolean;
  readonly searchParams: URLSearchParams;
}

/** A RouteRequest made once per request: a class, so that the lazy query getter is shared, not a closure per request. */
export class LayerRequest implements RouteRequest {
  readonly secure: boolean;
  #searchParams: URLSearchParams | undefined;
  #json: boolean | undefined;

  constructor(
    readonly view: RequestView,
    readonly origin: Origin,
  ) {
    this.secure = origin.scheme === 'https';
  }

  /** Read only when the answer is a challenge or an error page, not on every forwarded request. */
  get json(): boolean {
    return (this.#json ??= callerWantsJson(this.view));
  }

  /** Parsed only by the /.auth routes that read it, not on every proxied request. */
  get searchParams(): URLSearchParams {
    return (this.#searchParams ??= new URLSearchParams(this.view.query));
  }
}
