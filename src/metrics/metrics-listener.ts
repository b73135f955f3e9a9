// The metrics listener (`--metrics-port`): Prometheus' text format at
// GET /metrics on a listener of its own, apart from the traffic gatehouse
// judges (loopback by default: what it tells about a deployment is for its
// operators).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Logger } from '../logging.js';

export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

export interface MetricsListener {
  readonly url: string;
  close(): Promise<void>;
}

export async function startMetricsListener(
  host: string,
  port: number,
  source: MetricsSource,
  logger: Logger,
): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') {
      res
        .writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end('Not found: the metrics are at /metrics\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res
        .writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' })
        .end('Method not allowed\n');
      return;
    }
    source.metrics().then(
      (text) =>
        res
          .writeHead(200, { 'Content-Type': source.contentType, 'Cache-Control': 'no-store' })
          .end(req.method === 'HEAD' ? undefined : text),
      (error: unknown) => {
        logger.warn({ reason: (error as Error).message }, 'metrics could not be collected');
        res
          .writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': '1' })
          .end('Metrics could not be collected; try again.\n');
      },
    );
  });
  server.listen(port, host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}/metrics`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
