// A webhook receiver in its own process, for the load benchmarks:
//   gatehouse:      the gatehouse server (Koa, logging on, output discarded)
//   gatehouse-node: the receiver's node:http handler (logging on)
//   octokit:   @octokit/webhooks createNodeMiddleware on node:http
// Reports its port (and, on request, its memory) to the parent over IPC.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { Webhooks, createNodeMiddleware } from '@octokit/webhooks';

// The compiled package (dist/), as users run it: not the tsx-transformed sources.
const distIndex = new URL('../../dist/index.js', import.meta.url).href;
const { startServer, createNodeHandler, WebhookReceiver } = (await import(distIndex)) as typeof import('../../src/index.js');

const [kind, secret] = process.argv.slice(2) as [string, string];

async function listen(): Promise<number> {
  if (kind === 'gatehouse') {
    const running = await startServer({ port: 0, webhook: { secret } });
    return (running.server.address() as AddressInfo).port;
  }
  if (kind === 'gatehouse-node') {
    const receiver = new WebhookReceiver({ secret });
    const server = http.createServer(createNodeHandler(receiver));
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    return (server.address() as AddressInfo).port;
  }
  if (kind === 'octokit') {
    const webhooks = new Webhooks({ secret });
    webhooks.on('push', () => {});
    const server = http.createServer(createNodeMiddleware(webhooks, { path: '/api/forge/webhook' }));
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    return (server.address() as AddressInfo).port;
  }
  throw new Error(`unknown receiver ${kind}`);
}

const port = await listen();
globalThis.gc?.();
const rssBefore = process.memoryUsage().rss;
process.send!({ port, rssBefore });
process.on('message', (message) => {
  if (message === 'exit') process.exit(0);
  if (message === 'memory') {
    process.send!({ rssBefore, maxRss: process.resourceUsage().maxRSS * 1024 });
  }
});
