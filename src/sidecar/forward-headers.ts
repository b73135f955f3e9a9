// The headers the app receives through the sidecar: the core's edit list applied (identity
// aliases and spoofable forwarding headers removed, identity and X-Forwarded-* set:
// core/http/forward-edits.ts), and the sidecar's own hop taken off (hop-by-hop fields and what
// the client's Connection names, the framing, Expect).
import type { IncomingHttpHeaders } from 'node:http';

import type { ForwardEdits } from '../core/http/forward-edits.js';
import { HOP_BY_HOP, namedByConnection } from './hop-by-hop.js';

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
