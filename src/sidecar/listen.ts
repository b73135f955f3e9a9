import { once } from 'node:events';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  readonly server: Server;
  readonly url: string;
  /** Closes the server and every connection at once, requests in progress included. */
  close(): Promise<void>;
  /**
   * A graceful stop: no new connections; idle keep-alive connections are closed now, busy ones
   * answer their request in progress (with `Connection: close`) and then close; whatever is still
   * open after `graceMs` is closed. Resolves with whether everything finished in time.
   */
  drain(graceMs: number): Promise<boolean>;
}

/** How often connections that have just become idle are closed while draining. */
const DRAIN_SWEEP_MS = 100;

/** A server listening before it has a handler, so its URL can be known first (the dev provider needs it). */
export async function listenEarly(host: string, port: number): Promise<Listening> {
  const server = http.createServer();
  server.listen(port, host);
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${shown}:${address.port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    drain: (graceMs) =>
      new Promise((resolve) => {
        // Ahead of every handler: from now on, each answer ends its connection. Requests that
        // expect a 100 Continue arrive as 'checkContinue' instead, when the server listens for it
        // (only then: a first such listener would take those requests from 'request').
        const closeAfterAnswer = (_req: unknown, res: http.ServerResponse): void => {
          res.shouldKeepAlive = false;
        };
        server.prependListener('request', closeAfterAnswer);
        if (server.listenerCount('checkContinue') > 0) server.prependListener('checkContinue', closeAfterAnswer);
        // A request that arrived just before the drain may already be answered with keep-alive:
        // its connection is idle a moment later and closed by the next sweep.
        const sweep = setInterval(() => server.closeIdleConnections(), DRAIN_SWEEP_MS);
        const deadline = setTimeout(() => {
          clearInterval(sweep);
          server.closeAllConnections();
          resolve(false);
        }, graceMs);
        server.close(() => {
          clearInterval(sweep);
          clearTimeout(deadline);
          resolve(true);
        });
      }),
  };
}
