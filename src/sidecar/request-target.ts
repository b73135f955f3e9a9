// HTTP/1.1 request targets (RFC 9112 §3.2). Browsers send the origin form
// (`/path?query`); a server must also accept the absolute form
// (`http://host/path?query`), which some clients send when configured to use
// gatehouse as a proxy. Routing, excluded paths and the app all work on the
// origin form, so an absolute target is turned into one first.

/** The outcome for a request's target: ok (it is in origin form now, rewritten if it was absolute), or refused. */
type TargetCheck = { readonly kind: 'ok' } | { readonly kind: 'refused'; readonly reason: string };

const ABSOLUTE = /^https?:\/\/([^/?#]*)(.*)$/i;

/**
 * Rewrites an absolute-form `req.url` to its origin form, keeping the path's bytes exactly (no URL
 * normalization: the app must see what the client sent). The authority must name the same host as
 * the Host header, and there must be one Host header: a client that says two different things is
 * refused rather than believed either way.
 */
function toOriginForm(req: {
  url?: string | undefined;
  headers: { host?: string | undefined };
  rawHeaders: readonly string[];
}): TargetCheck {
  // node keeps the first of several Host headers; a server must refuse such a request (RFC 9112 §3.2).
  if (hostHeaders(req.rawHeaders) > 1) return { kind: 'refused', reason: 'more than one Host header' };
  const url = req.url ?? '';
  if (url.charCodeAt(0) === 0x2f /* '/' */) return OK;
  // `*` (the asterisk form, OPTIONS for the whole server) names no resource of the app's.
  if (url === '*') return { kind: 'refused', reason: 'asterisk-form request target' };
  const absolute = ABSOLUTE.exec(url);
  if (absolute === null) return OK; // anything else: left to the usual checks, which refuse what they cannot route
  const [, authority, rest] = absolute as unknown as [string, string, string];
  if (authority.toLowerCase() !== (req.headers.host ?? '').toLowerCase())
    return { kind: 'refused', reason: 'request target names another host than Host' };
  if (rest.includes('#')) return { kind: 'refused', reason: 'request target has a fragment' };
  req.url = rest === '' ? '/' : rest.charCodeAt(0) === 0x3f /* '?' */ ? `/${rest}` : rest;
  return OK;
}

const OK: TargetCheck = { kind: 'ok' };

/** A request target in origin form, split once: the path (raw, not decoded) and the query (without `?`). */
export interface RequestTarget {
  readonly path: string;
  readonly query: string;
}

/**
 * The request's target, parsed once for every route and the core's view of the request: made
 * origin-form (toOriginForm), then split at the first `?`. Refused as toOriginForm refuses.
 */
export function parseTarget(req: Parameters<typeof toOriginForm>[0]): RequestTarget | { readonly refused: string } {
  const check = toOriginForm(req);
  if (check.kind === 'refused') return { refused: check.reason };
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q === -1 ? { path: url, query: '' } : { path: url.slice(0, q), query: url.slice(q + 1) };
}

function hostHeaders(raw: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') count++;
  }
  return count;
}

/** What a refused target gets, from the front door and the WebSocket handshake route alike. */
export const BAD_TARGET_MESSAGE = 'Bad request target.';

/**
 * A body coded with anything but chunked alone (`gzip, chunked`): node's parser undoes the
 * chunking only, and passing the rest on would hand the app coded bytes it was never told about.
 * Refused as RFC 9112 §6.1 says, with 501, as nginx does.
 */
export function unsupportedTransferCoding(req: { headers: { 'transfer-encoding'?: string | undefined } }): boolean {
  const coding = req.headers['transfer-encoding'];
  return coding !== undefined && coding.trim().toLowerCase() !== 'chunked';
}

export const UNSUPPORTED_CODING_MESSAGE = 'Transfer codings other than chunked are not supported.';

/**
 * Whether a request has a body, by the framing node's parser read (it refuses any other framing):
 * a Transfer-Encoding, or a Content-Length other than 0.
 */
export function declaresBody(headers: {
  readonly 'transfer-encoding'?: string | undefined;
  readonly 'content-length'?: string | undefined;
}): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && length !== '0';
}
