// One of the processes of the sidecar benchmark, reporting its port over IPC:
//   app:        the upstream app (a small fixed answer)
//   koa:        bare Koa with gatehouse's forwarder (undici) in front of the app (the baseline)
//   koa-bytes:  the same, adding the same identity header bytes gatehouse adds (static)
//   gatehouse:  the gatehouse gateway (compiled package) in front of the app
//   idp:        gatehouse's development OpenID provider (oidc-provider), its clients given as JSON;
//               reports its issuer too
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import Koa from 'koa';

const [kind, upstream, configJson, masterKeyHex] = process.argv.slice(2) as [string, string?, string?, string?];

async function listen(server: http.Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return (server.address() as AddressInfo).port;
}

async function start(): Promise<number> {
  if (kind === 'app') {
    const body = JSON.stringify({ ok: true, pad: 'x'.repeat(200) });
    return listen(
      http.createServer((_req, res) =>
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body),
      ),
    );
  }
  if (kind === 'koa' || kind === 'koa-bytes') {
    // The forwarder gatehouse uses, with nothing decided: the headers as received (less framing), plus static ones.
    const { AppForwarder } = (await import(
      new URL('../../dist/sidecar/forward-to-app.js', import.meta.url).href
    )) as typeof import('../../src/sidecar/forward-to-app.js');
    const { upstreamPool } = (await import(
      new URL('../../dist/sidecar/upstream-pool.js', import.meta.url).href
    )) as typeof import('../../src/sidecar/upstream-pool.js');
    const { createLogger } = (await import(
      new URL('../../dist/logging.js', import.meta.url).href
    )) as typeof import('../../src/logging.js');
    const pool = upstreamPool(new URL(upstream!), { connections: 512, timeoutMs: 60_000, idleMs: 30_000 });
    const forwarder = new AppForwarder({
      pool,
      maxInFlight: 1536,
      timeoutMs: 60_000,
      logger: createLogger('silent'),
      wantsJson: () => true,
    });
    const extra = kind === 'koa-bytes' ? (JSON.parse(configJson!) as Record<string, string>) : {};
    const app = new Koa();
    app.silent = true; // clients closing at the end of a run are not errors worth printing
    app.use((ctx) => {
      ctx.respond = false;
      const { connection: _c, 'keep-alive': _k, ...headers } = ctx.req.headers;
      forwarder.forward(ctx.req, ctx.res, { ...headers, ...extra });
    });
    return listen(http.createServer(app.callback()));
  }
  if (kind === 'gatehouse') {
    const dist = (await import(
      new URL('../../dist/index.js', import.meta.url).href
    )) as typeof import('../../src/index.js');
    const { config } = dist.resolveAuthConfig(JSON.parse(configJson!), { BENCH_SECRET: 'unused' });
    const selection = dist.selectCore('require');
    // GATEHOUSE_BENCH_SESSION_TTL_MS: the instruction count runs under valgrind, about fifty times slower; its
    // session cache is kept proportionally long, else the record would be re-read within the counted requests.
    const ttl = process.env.GATEHOUSE_BENCH_SESSION_TTL_MS;
    const gateway = await dist.createGateway({
      config,
      upstream: upstream!,
      core: selection.core,
      logger: dist.createLogger('silent'),
      masterKey: Buffer.from(masterKeyHex!, 'hex'),
      ...(ttl ? { sessionCacheTtlMs: Number(ttl) } : {}),
    });
    // Served as `gatehouse serve` serves it (attach sets the client timeouts too).
    const front = await dist.listenEarly('127.0.0.1', 0);
    dist.attach(front, gateway);
    return Number(new URL(front.url).port);
  }
  if (kind === 'idp') {
    const { startDevIdentityProvider } = (await import(
      new URL('../../dist/dev/identity-provider.js', import.meta.url).href
    )) as typeof import('../../src/dev/identity-provider.js');
    const idp = await startDevIdentityProvider({
      clients: JSON.parse(upstream!) as Parameters<typeof startDevIdentityProvider>[0]['clients'],
    });
    issuer = idp.issuer;
    return Number(new URL(idp.issuer).port);
  }
  throw new Error(`unknown kind ${kind}`);
}

let issuer: string | undefined;
const port = await start();
process.send!({ port, ...(issuer !== undefined ? { issuer } : {}) });
process.on('message', (m) => m === 'exit' && process.exit(0));
