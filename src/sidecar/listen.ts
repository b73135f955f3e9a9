import { once } from 'node:events';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  readonly server: Server;
  readonly url: string;
  close(): Promise<void>;
}

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
  };
}
