// The receiver three ways: inside the gatehouse server, as Koa middleware
// in someone's app, and as a plain node:http handler.
import http from 'node:http';

import { expect } from 'chai';
import Koa from 'koa';

import { createKoaMiddleware, createNodeHandler, startServer, WebhookReceiver, createLogger } from '../../src/index.js';
import { fallbackCore } from '../../src/native/index.js';
import { deliver, listen, request, SECRET, sign } from '../support/http.js';
import { raw, rawBody } from '../support/raw-http.js';

const PUSH = JSON.stringify({ ref: 'refs/heads/main', repository: { full_name: 'o/r' }, commits: [1, 2] });
const EXPECTED = {
  event: 'push',
  repository: 'o/r',
  ref: 'refs/heads/main',
  commits: 2,
  message: 'Processed push with 2 commit(s).',
};

describe('webhook adapters', () => {
  it('gatehouse server (startServer): receiver mounted, JSON 404 elsewhere', async () => {
    const running = await startServer({
      port: 0,
      logger: createLogger('silent'),
      webhook: { secret: SECRET, env: {} },
    });
    try {
      expect(running.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      const reply = await deliver(running.url, 'push', PUSH);
      expect(reply.status).to.equal(200);
      expect(reply.json).to.deep.equal(EXPECTED);
      const missing = await request(running.url, { method: 'GET', path: '/nope' });
      expect(missing.status).to.equal(404);
      expect(missing.headers['content-type']).to.equal('application/json; charset=utf-8');
      expect(missing.json).to.deep.equal({ error: 'Not found.' });
      // A tunnel request gets an answer, not a dropped connection (node's default without a 'connect' listener).
      const tunnel = await raw(running.url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      expect(tunnel).to.match(/^HTTP\/1\.1 400 /);
      expect(rawBody(tunnel)).to.contain('CONNECT is not supported');
    } finally {
      await running.close();
    }
  });

  it('gatehouse server: a delivery with an absolute-form target (RFC 9112 §3.2.2) is received; one naming another host is a 400', async () => {
    const running = await startServer({
      port: 0,
      logger: createLogger('silent'),
      webhook: { secret: SECRET, env: {} },
    });
    try {
      const host = new URL(running.url).host;
      const post = (target: string) =>
        new Promise<{ status: number; json: unknown }>((resolve, reject) => {
          // node sends `path` as the request target, as is.
          const req = http.request(
            {
              host: '127.0.0.1',
              port: Number(new URL(running.url).port),
              method: 'POST',
              path: target,
              agent: false,
              headers: {
                host,
                'content-type': 'application/json',
                'x-forge-event': 'push',
                'x-forge-signature-256': sign(PUSH),
              },
            },
            (res) => {
              let text = '';
              res.on('data', (c: Buffer) => (text += c.toString()));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as unknown }));
            },
          );
          req.on('error', reject);
          req.end(PUSH);
        });
      const received = await post(`http://${host}/api/forge/webhook`);
      expect(received.status).to.equal(200);
      expect(received.json).to.deep.equal(EXPECTED);
      expect(await post('http://elsewhere.example/api/forge/webhook')).to.deep.equal({
        status: 400,
        json: { error: 'Bad request target.' },
      });
    } finally {
      await running.close();
    }
  });

  it('Koa middleware: serves its path, passes everything else on', async () => {
    const receiver = new WebhookReceiver({ secret: SECRET, env: {}, logger: createLogger('silent') });
    const app = new Koa();
    app.use(createKoaMiddleware(receiver));
    app.use((ctx) => {
      ctx.body = 'app route';
    });
    const server = await listen(http.createServer(app.callback()));
    try {
      const reply = await deliver(server.url, 'push', PUSH);
      expect(reply.status).to.equal(200);
      expect(reply.headers['content-type']).to.equal('application/json; charset=utf-8');
      expect(reply.json).to.deep.equal(EXPECTED);
      expect((await request(server.url, { method: 'GET', path: '/other' })).text).to.equal('app route');
      const bad = await deliver(server.url, 'push', PUSH, { 'x-forge-signature-256': 'sha256=nope' });
      expect(bad.status).to.equal(401);
      expect(bad.headers['content-type']).to.equal('application/json; charset=utf-8');
    } finally {
      await server.close();
    }
  });

  it('Koa middleware on a custom path with the fallback core', async () => {
    const receiver = new WebhookReceiver({
      secret: SECRET,
      env: {},
      logger: createLogger('silent'),
      path: '/hooks/forge',
      core: fallbackCore,
    });
    const app = new Koa();
    app.use(createKoaMiddleware(receiver));
    const server = await listen(http.createServer(app.callback()));
    try {
      const reply = await request(server.url, {
        path: '/hooks/forge',
        headers: {
          'x-forge-event': 'push',
          'x-forge-signature-256': (await import('../support/http.js')).sign(PUSH),
          'content-type': 'application/json',
        },
        body: PUSH,
      });
      expect(reply.json).to.deep.equal(EXPECTED);
    } finally {
      await server.close();
    }
  });

  it('node:http handler with a connect-style next()', async () => {
    const receiver = new WebhookReceiver({ secret: SECRET, env: {}, logger: createLogger('silent') });
    const handler = createNodeHandler(receiver);
    const server = await listen(
      http.createServer((req, res) =>
        handler(req, res, () => {
          res.writeHead(204).end();
        }),
      ),
    );
    try {
      expect((await deliver(server.url, 'push', PUSH)).json).to.deep.equal(EXPECTED);
      expect((await request(server.url, { method: 'GET', path: '/health' })).status).to.equal(204);
    } finally {
      await server.close();
    }
  });

  it('a configuration mistake is reported clearly at construction', () => {
    expect(() => new WebhookReceiver({ secret: SECRET, env: { GATEHOUSE_WEBHOOK_BODY_LIMIT: 'lots' } })).to.throw(
      /GATEHOUSE_WEBHOOK_BODY_LIMIT must be a positive integer/,
    );
    expect(() => new WebhookReceiver({ secret: SECRET, env: { FORGE_WEBHOOK_PREVIOUS_SECRETS: '[1,2]' } })).to.throw(
      /JSON array of strings/,
    );
    expect(() => new WebhookReceiver({ secret: SECRET, env: { FORGE_WEBHOOK_PREVIOUS_SECRETS: '[oops' } })).to.throw(
      /not a JSON array/,
    );
    expect(() => new WebhookReceiver({ secret: SECRET, path: 'no-slash' })).to.throw(/must start with/);
  });

  it('the body limit is configurable from the environment', async () => {
    const receiver = new WebhookReceiver({
      secret: SECRET,
      env: { GATEHOUSE_WEBHOOK_BODY_LIMIT: '10' },
      logger: createLogger('silent'),
    });
    const server = await listen(http.createServer(createNodeHandler(receiver)));
    try {
      expect((await deliver(server.url, 'ping', '{"a":"12345678"}')).status).to.equal(413);
      expect((await deliver(server.url, 'ping', '{}')).status).to.equal(200);
    } finally {
      await server.close();
    }
  });
});
