// The agents that carry requests to the app. For an https app the TLS server
// name (SNI) and the certificate check must name the app's own host: node's
// agent would otherwise take them from the request's Host header, which is the
// host the client asked for (gatehouse's public name), not the app's. The same names serve the
// undici pool (upstream-pool.ts).
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';

/** The app's host as a socket connects to it: an IPv6 address without its URL brackets. */
export function upstreamHost(upstream: URL): string {
  return upstream.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** The TLS server name to send the app: its host, or '' (none) for an IP address, whose certificate is checked against the address. */
export function upstreamServerName(upstream: URL): string {
  const host = upstreamHost(upstream);
  return isIP(host) === 0 ? host : '';
}

export function upstreamAgent(upstream: URL, options: http.AgentOptions): http.Agent {
  if (upstream.protocol !== 'https:') return new http.Agent(options);
  return new https.Agent({ ...options, servername: upstreamServerName(upstream) });
}
