// The request a web server asks the verify endpoint about, read from the headers it sends with
// the question. Two conventions:
//
// - nginx (`auth_request`): X-Original-URI ($request_uri) and X-Original-Method, as the shipped
//   configuration sets them;
// - forwarded (Traefik ForwardAuth, Caddy forward_auth): X-Forwarded-Uri and X-Forwarded-Method.
//
// Both give the host and scheme in X-Forwarded-Host and X-Forwarded-Proto. Every one of these is
// required, once: a request that leaves one out, repeats one, or sends both conventions saying
// different things is refused rather than judged by a guess (a client's own header could be the
// one that was left in). Only called for a trusted peer (trusted-proxies.ts).
import type { RequestView } from '../http/request-view.js';

export type Convention = 'nginx' | 'forwarded';

export interface OriginalRequest {
  readonly convention: Convention;
  /** The original request as the core judges it: the verify request's other headers, its cookies and credentials among them. */
  readonly view: RequestView;
}

/** Why no original request could be read: said to the web server (400) and logged. */
export interface UnreadableOriginal {
  readonly problem: string;
}

/** Longer than nginx's default request line buffer (8 KiB) takes: no real request target is. */
export const MAX_ORIGINAL_URI_LENGTH = 8192;

const NGINX_URI = 'x-original-uri';
const NGINX_METHOD = 'x-original-method';
const FORWARDED_URI = 'x-forwarded-uri';
const FORWARDED_METHOD = 'x-forwarded-method';
const HOST = 'x-forwarded-host';
const PROTO = 'x-forwarded-proto';

/** The names the conventions read, with their spelling for messages. */
const READ: ReadonlyMap<string, string> = new Map([
  [NGINX_URI, 'X-Original-URI'],
  [NGINX_METHOD, 'X-Original-Method'],
  [FORWARDED_URI, 'X-Forwarded-Uri'],
  [FORWARDED_METHOD, 'X-Forwarded-Method'],
  [HOST, 'X-Forwarded-Host'],
  [PROTO, 'X-Forwarded-Proto'],
]);

/** Never asked: the verify endpoint judges no route of gatehouse's own, and only those read bodies. */
const NO_BODY = (): Promise<Buffer> => Promise.reject(new Error('the verify endpoint reads no body'));

/** An HTTP method is a token (RFC 9110 §9.1); none in use is longer than this. */
const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}$/;
/** A request target in origin form: a path from `/`, visible ASCII only (no blank, control character or fragment). */
const ORIGIN_FORM = /^\/[\x21-\x22\x24-\x7e]*$/;

export const MISSING_ORIGINAL_MESSAGE =
  'The verify endpoint judges the request a web server forwards: send X-Original-URI and X-Original-Method (nginx) or X-Forwarded-Uri and X-Forwarded-Method (Traefik, Caddy), with X-Forwarded-Host and X-Forwarded-Proto';

/**
 * The original request of a verify request, or why there is none. `withheld` are further header
 * names (lower case) the original must not carry: those the configuration reads the origin from
 * (httpSettings.forwardProxy's custom names), which would otherwise override the host and scheme
 * read here.
 */
export function readOriginalRequest(
  verify: RequestView,
  withheld: readonly string[] = [],
): OriginalRequest | UnreadableOriginal {
  const found = new Map<string, string>();
  const headers: Array<readonly [string, string]> = [];
  for (const pair of verify.headers) {
    // Every name read starts with "x": the others (the cookies, Accept, …) are passed on without a
    // lower-cased copy of their name, unless some are withheld.
    if ((pair[0].charCodeAt(0) | 0x20) !== 0x78) {
      if (withheld.length === 0 || !withheld.includes(pair[0].toLowerCase())) headers.push(pair);
      continue;
    }
    const name = pair[0].toLowerCase();
    const spelled = READ.get(name);
    if (spelled === undefined) {
      if (!withheld.includes(name)) headers.push(pair);
      continue;
    }
    if (found.has(name)) return { problem: `${spelled} was sent more than once` };
    found.set(name, pair[1]);
  }
  const nginx = found.has(NGINX_URI) || found.has(NGINX_METHOD);
  const forwarded = found.has(FORWARDED_URI) || found.has(FORWARDED_METHOD);
  if (!nginx && !forwarded) return { problem: MISSING_ORIGINAL_MESSAGE };
  // Both at once (a web server configured to send both): read when they say the same, answered as
  // nginx is answered (Traefik and Caddy never send X-Original-*); refused when they differ.
  const convention: Convention = nginx ? 'nginx' : 'forwarded';
  const uriName = nginx ? NGINX_URI : FORWARDED_URI;
  const methodName = nginx ? NGINX_METHOD : FORWARDED_METHOD;
  // Every header read is there (the usual case) when as many were found as the convention reads.
  if (found.size !== (nginx && forwarded ? READ.size : 4)) {
    const required = nginx && forwarded ? [...READ.keys()] : [uriName, methodName, HOST, PROTO];
    const missing = required.filter((name) => !found.has(name)).map((name) => READ.get(name)!);
    return { problem: `missing ${missing.join(', ')}` };
  }
  if (nginx && forwarded) {
    for (const [ours, theirs] of [
      [NGINX_URI, FORWARDED_URI],
      [NGINX_METHOD, FORWARDED_METHOD],
    ] as const) {
      if (found.get(ours) !== found.get(theirs))
        return {
          problem: `${READ.get(ours)} and ${READ.get(theirs)} disagree: the web server must send one convention, or both saying the same`,
        };
    }
  }

  const uri = found.get(uriName)!;
  const uriProblem = originFormProblem(uri);
  if (uriProblem !== undefined) return { problem: `${READ.get(uriName)} ${uriProblem}` };
  const method = found.get(methodName)!;
  if (!METHOD.test(method)) return { problem: `${READ.get(methodName)} is not an HTTP method` };
  const scheme = firstValue(found.get(PROTO)!).toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return { problem: 'X-Forwarded-Proto is neither http nor https' };
  // The whole value, never the first of a list: the app gets the Host the web server sent it, a
  // list included, and must not be judged for a host it never sees. The core refuses anything but
  // one host (400), as on gatehouse's own routes.
  const host = found.get(HOST)!.trim();
  if (host === '') return { problem: 'X-Forwarded-Host is empty' };

  const q = uri.indexOf('?');
  return {
    convention,
    view: {
      method,
      path: q === -1 ? uri : uri.slice(0, q),
      query: q === -1 ? '' : uri.slice(q + 1),
      headers,
      scheme,
      host,
      remoteAddress: verify.remoteAddress,
      readBody: NO_BODY,
    },
  };
}

/** What makes a request target unfit to judge, or undefined: it must be a path in origin form, as the app will get it. */
function originFormProblem(uri: string): string | undefined {
  if (uri.length > MAX_ORIGINAL_URI_LENGTH) return `is longer than ${MAX_ORIGINAL_URI_LENGTH} characters`;
  if (!uri.startsWith('/')) return 'is not a path starting with "/" (an absolute URI or no path at all)';
  if (!ORIGIN_FORM.test(uri))
    return 'holds a character no request target has (a blank, a control character, a fragment or a non-ASCII character)';
  return undefined;
}

/** The first of a list a chain of proxies may have made (`https, http`), trimmed: the scheme the client used. */
function firstValue(value: string): string {
  const comma = value.indexOf(',');
  return (comma === -1 ? value : value.slice(0, comma)).trim();
}
