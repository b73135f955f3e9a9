// The agents that carry requests to the app. For an https app the TLS server
// name (SNI) and the certificate check must name the app's own host: node's
// agent would otherwise take them from the request's Host header, which is the
// host the client asked for (gatehouse's public name), not the app's.
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';

export function upstreamAgent(upstream: URL, options: http.AgentOptions): http.Agent {
  if (upstream.protocol !== 'https:') return new http.Agent(options);
  const host = upstream.hostname.replace(/^\[(.*)\]$/, '$1');
  // An IP address is no server name: '' sends none, and the certificate is checked against the address.
  return new https.Agent({ ...options, servername: isIP(host) === 0 ? host : '' });
}
