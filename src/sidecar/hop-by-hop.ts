// Connection-specific header fields (RFC 9110 §7.6.1): they describe one hop,
// client to gatehouse or gatehouse to app, and are never passed on to the other.

/** The fixed ones, plus the legacy fields proxies drop (lower case, as node names them). */
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
