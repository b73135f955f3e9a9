// Connection-specific header fields (RFC 9110 §7.6.1): they describe one hop,
// client to gatehouse or gatehouse to app, and are never passed on to the other.

/** The fixed ones, plus the legacy fields proxies drop (lower case, as node names them). */
export const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'proxy-authorization', 'proxy-authenticate']);

/** The further fields a `Connection` header names (lower case, without the fixed ones). */
export function namedByConnection(connection: string): string[] {
  const named: string[] = [];
  for (const name of connection.split(',')) {
    const trimmed = name.trim().toLowerCase();
    if (trimmed !== '' && !HOP_BY_HOP.has(trimmed)) named.push(trimmed);
  }
  return named;
}
