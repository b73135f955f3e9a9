// The connections to the app: one undici Pool per gateway. undici frames every request body
// itself (Content-Length when the length is known and checked, chunked otherwise, for every
// method) and refuses the framing headers a caller might try to set, so no body can reach the
// app unframed; it bounds the connections, aborts a request whose signal fires, and times the
// app's silence before and during its answer.
import { buildConnector, Pool } from 'undici';

import { upstreamServerName } from './upstream-agent.js';

export interface UpstreamPoolOptions {
  /** Connections to the app at most; requests beyond them wait in the pool's queue. */
  readonly connections: number;
  /** How long the app may stay silent before its answer begins, and between two parts of it. */
  readonly timeoutMs: number;
  /** How long an idle keep-alive connection is kept (an app's own shorter `Keep-Alive: timeout` wins). */
  readonly idleMs: number;
}

/**
 * For an https app, the TLS server name (SNI) and the certificate check name the app's own host.
 * undici would otherwise take the server name from each request's Host header: the host the
 * client asked for (gatehouse's public name), not the app's. An IP address is no server name.
 */
function upstreamConnector(upstream: URL): buildConnector.connector | undefined {
  if (upstream.protocol !== 'https:') return undefined;
  const servername = upstreamServerName(upstream);
  const connect = buildConnector({});
  return (options, callback) => connect({ ...options, servername }, callback);
}

export function upstreamPool(upstream: URL, options: UpstreamPoolOptions): Pool {
  const connect = upstreamConnector(upstream);
  return new Pool(upstream.origin, {
    connections: options.connections,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: options.idleMs,
    keepAliveMaxTimeout: options.idleMs,
    // Closed a second before an app's announced idle timeout (node's agent keeps the same margin).
    keepAliveTimeoutThreshold: 1_000,
    // One request at a time per connection: a pipelined request would wait behind a slow answer.
    pipelining: 1,
    ...(connect ? { connect } : {}),
  });
}
