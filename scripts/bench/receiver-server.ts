// A webhook receiver in its own process, for the load benchmarks:
//   gatehouse:      the gatehouse server (`gatehouse serve`; logging on, output discarded)
//   gatehouse-node: the receiver's node:http handler on a bare server (logging on)
//   gatehouse-koa:  the receiver's Koa middleware in a Koa app (logging on)
//   octokit:   @octokit/webhooks createNodeMiddleware on node:http
// Reports its port (and, on request, its memory) to the parent over IPC.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { Webhooks, createNodeMiddleware } from '@octokit/webhooks';
import Koa from 'koa';

// The compiled package (dist/), as users run it: not the tsx-transformed sources.
const distIndex = new URL('../../dist/index.js', import.meta.url).href;
const { startServer, createNodeHandler, createKoaMiddleware, WebhookReceiver } = (await import(
  distIndex
)) as typeof import('../../src/index.js');

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
  if (kind === 'gatehouse-koa') {
    const receiver = new WebhookReceiver({ secret });
    const app = new Koa();
    app.use(createKoaMiddleware(receiver));
    const server = http.createServer(app.callback());
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
