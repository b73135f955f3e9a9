// The headers that cross between the client's hop and the app's, each way. Connection-specific
// fields (RFC 9110 §7.6.1) describe one hop, client to gatehouse or gatehouse to app, and are
// never passed on to the other. The app's copy of a request gets the core's edit list applied
// (identity aliases and spoofable forwarding headers removed, identity and X-Forwarded-* set:
// core/http/header-policy.ts), without the client's hop (hop-by-hop fields and what its Connection
// names, the framing, Expect). The app's answer reaches the client without the app's hop.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

import type { ForwardEdits } from '../core/http/header-policy.js';

/** The fields every hop has of its own, plus the legacy ones proxies drop (lower case, as node names them). */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
]);

/**
 * Fields a `Connection` header may name but never removes: the message's framing and its Host.
 * A request whose `Connection` named its own Content-Length would otherwise go on with its body
 * and nothing saying where the body ends, and the app would read the body as a next request.
 */
const NEVER_NAMED = new Set(['content-length', 'transfer-encoding', 'host']);

/** The further fields a `Connection` header names (lower case, without the fixed ones). */
export function namedByConnection(connection: string): readonly string[] {
  // The everyday single values (keep-alive, close) name nothing further: answered without a split.
  if (!connection.includes(',')) {
    const only = connection.trim().toLowerCase();
    return only === '' || HOP_BY_HOP.has(only) || NEVER_NAMED.has(only) ? NOTHING : [only];
  }
  const named: string[] = [];
  for (const name of connection.split(',')) {
    const trimmed = name.trim().toLowerCase();
    if (trimmed !== '' && !HOP_BY_HOP.has(trimmed) && !NEVER_NAMED.has(trimmed)) named.push(trimmed);
  }
  return named;
}

const NOTHING: readonly string[] = [];

/**
 * Request fields of the client's hop that are not hop-by-hop by name. `Content-Length`: the body's
 * framing toward the app is the forwarder's to write (undici writes the length of what it sends,
 * or chunks it), from the framing node's parser read. `Expect`: gatehouse answers the client's
 * `100-continue` itself when it starts reading the body (expect-continue.ts).
 */
const NOT_PASSED_ON = new Set(['content-length', 'expect']);

const lowerCased = new WeakMap<ReadonlyArray<readonly [string, string]>, ReadonlyArray<readonly [string, string]>>();

/** The identity headers with node's lower-case names, made once per set (the core shares one set per identity). */
function lowerCaseNames(set: ReadonlyArray<readonly [string, string]>): ReadonlyArray<readonly [string, string]> {
  let lower = lowerCased.get(set);
  if (lower === undefined) {
    lower = set.map(([name, value]) => [name.toLowerCase(), value] as const);
    lowerCased.set(set, lower);
  }
  return lower;
}

/**
 * The headers to forward, as a new object (node's lower-cased shape): hop-by-hop headers, every
 * header the `Connection` header names and every header the edits remove are left out, then the
 * edits' headers are added. A hostile `Connection` header naming identity or X-Forwarded-*
 * headers therefore removes only client headers. (A fresh object, not deletes on node's:
 * deleting turns an object into a slow dictionary for every later copy.) WebSocket handshakes
 * keep `Connection: Upgrade` and `Upgrade`.
 */
export function forwardHeaders(
  headers: IncomingHttpHeaders,
  edits: ForwardEdits,
  upgrade: boolean,
): IncomingHttpHeaders {
  // Browsers send `Connection: keep-alive`: a name dropped anyway needs no set.
  const named = headers.connection === undefined ? undefined : namedByConnection(headers.connection);
  const { remove } = edits;
  const out: IncomingHttpHeaders = {};
  for (const name of Object.keys(headers)) {
    const drop =
      HOP_BY_HOP.has(name) ||
      NOT_PASSED_ON.has(name) ||
      (named !== undefined && named.length > 0 && named.includes(name)) ||
      (remove.length > 0 && remove.includes(name));
    if (drop && !(upgrade && (name === 'upgrade' || name === 'connection'))) continue;
    out[name] = headers[name];
  }
  if (upgrade) out.connection = 'Upgrade';
  for (const [name, value] of lowerCaseNames(edits.set)) out[name] = value;
  out['x-forwarded-for'] = edits.forwarded.for;
  out['x-forwarded-proto'] = edits.forwarded.proto;
  out['x-forwarded-host'] = edits.forwarded.host;
  // A body of known length goes on with that length (undici checks it sends exactly that many bytes).
  const length = headers['content-length'];
  if (length !== undefined && headers['transfer-encoding'] === undefined && !upgrade) out['content-length'] = length;
  return out;
}

/**
 * The app's answer as the client receives it: the app's connection-specific headers stay on the
 * app's hop (its `Connection`, its idle-timeout hint `Keep-Alive`, which undici reads for its own
 * pool, and whatever private field its `Connection` header names). The framing and the client's
 * `Connection` are node's to choose for the client's hop.
 */
/** The app's answer headers (lower-case names, as undici gives them) less its hop's own. */
export function appAnswerHeaders(source: Record<string, string | string[] | undefined>): OutgoingHttpHeaders {
  const connection = source.connection;
  const named = connection === undefined ? [] : namedByConnection(String(connection));
  const kept: OutgoingHttpHeaders = {};
  for (const name in source) {
    const value = source[name];
    if (value === undefined || HOP_BY_HOP.has(name) || (named.length > 0 && named.includes(name))) continue;
    kept[name] = value;
  }
  return kept;
}
