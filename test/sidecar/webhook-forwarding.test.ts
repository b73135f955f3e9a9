// Over real HTTP (docs/webhooks.md): in front of an app (`serve --upstream`), a verified delivery
// is passed on to the app (the exact bytes, the sender's headers, X-Gatehouse-Webhook-Verified)
// and the sender gets the app's answer; anything unverified, malformed or ambiguous never reaches
// it. GitHub's header names work as well as X-Forge-*.
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

import { sign as octokitSign } from '@octokit/webhooks-methods';
import { expect } from 'chai';

import { resolveAuthConfig } from '../../src/core/config/auth-config.js';
import { createLogger } from '../../src/logging.js';
import { loadAddonCore } from '../../src/native/index.js';
import { attach, createGateway, type Gateway } from '../../src/sidecar/gateway.js';
import { listenEarly } from '../../src/sidecar/listen.js';
import type { WebhookReceiverOptions } from '../../src/webhook/config.js';
import { deliver, listen, request, sign, SECRET, type Listening } from '../support/http.js';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly rawHeaders: string[];
  readonly body: Buffer;
}

interface Setup {
  readonly url: string;
  readonly gateway: Gateway;
  readonly seen: Seen[];
  readonly appServer: http.Server;
  /** What the app answers next (default 202 text/plain "queued"). */
  answer: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  stopApp(): Promise<void>;
  close(): Promise<void>;
}

function queued(_req: http.IncomingMessage, res: http.ServerResponse): void {
  res
    .writeHead(202, { 'content-type': 'text/plain; charset=utf-8', 'x-app-private': 'not for the sender' })
    .end('queued');
}

async function startSetup(
  webhook: WebhookReceiverOptions = {},
  extra: { upstreamTimeoutMs?: number; upstreamConnections?: number; upstreamQueue?: number } = {},
): Promise<Setup> {
  const seen: Seen[] = [];
  const setup = { answer: queued } as { answer: Setup['answer'] };
  const app: Listening = await listen(
    http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          rawHeaders: req.rawHeaders,
          body: Buffer.concat(chunks),
        });
        setup.answer(req, res);
      });
    }),
  );
  const { config } = resolveAuthConfig(
    { globalValidation: { requireAuthentication: false }, login: { tokenStore: { enabled: false } } },
    {},
  );
  const gateway = await createGateway({
    config,
    upstream: app.url,
    core: loadAddonCore(),
    logger: createLogger(process.env.GATEHOUSE_TEST_LOG_LEVEL ?? 'silent'),
    masterKey: randomBytes(32),
    env: {},
    webhook: { env: {}, secret: SECRET, ...webhook },
    ...(extra.upstreamTimeoutMs ? { upstreamTimeoutMs: extra.upstreamTimeoutMs } : {}),
    ...(extra.upstreamConnections !== undefined ? { upstreamConnections: extra.upstreamConnections } : {}),
    ...(extra.upstreamQueue !== undefined ? { upstreamQueue: extra.upstreamQueue } : {}),
  }).catch(async (error: unknown) => {
    await app.close();
    throw error;
  });
  const front = await listenEarly('127.0.0.1', 0);
  attach(front, gateway);
  return Object.assign(setup, {
    url: front.url,
    gateway,
    seen,
    appServer: app.server,
    stopApp: () => app.close(),
    close: async () => {
      await front.close();
      await gateway.close();
      if (app.server.listening) await app.close();
    },
  });
}

const PUSH = Buffer.from(
  '{"ref":"refs/heads/main",  "commits":[{"id":"a"},{"id":"b"}],\n "note":"caf\u00e9 \u2713"}\n',
  'utf8',
);

describe('webhook deliveries in front of an app', function () {
  this.timeout(20_000);
  let setup: Setup;
  before(async () => {
    setup = await startSetup();
  });
  after(() => setup.close());
  beforeEach(() => {
    setup.seen.length = 0;
    setup.answer = queued;
  });

  it('a verified delivery reaches the app with its exact bytes, its headers and X-Gatehouse-Webhook-Verified; the sender gets the app’s status and body', async () => {
    const reply = await deliver(`${setup.url}`, 'push', PUSH, { 'x-forge-delivery': randomUUID(), 'x-custom': 'kept' });
    expect(reply.status).to.equal(202);
    expect(reply.text).to.equal('queued');
    expect(reply.headers['content-type']).to.equal('text/plain; charset=utf-8');
    expect(reply.headers['x-app-private']).to.equal(undefined);
    expect(setup.seen).to.have.length(1);
    const [got] = setup.seen;
    expect(got!.method).to.equal('POST');
    expect(got!.url).to.equal('/api/forge/webhook');
    expect(got!.body.equals(PUSH)).to.equal(true);
    expect(got!.headers['x-gatehouse-webhook-verified']).to.equal('true');
    expect(got!.headers['x-forge-event']).to.equal('push');
    expect(got!.headers['x-forge-signature-256']).to.equal(sign(PUSH));
    expect(got!.headers['x-custom']).to.equal('kept');
    expect(got!.headers['content-type']).to.equal('application/json');
    expect(got!.headers['content-length']).to.equal(String(PUSH.length));
  });

  it('a chunked delivery reaches the app whole, with its length', async () => {
    const body = Buffer.from(JSON.stringify({ zen: 'x'.repeat(50_000) }));
    const reply = await request(setup.url, {
      path: '/api/forge/webhook?source=ci',
      headers: { 'content-type': 'application/json', 'x-forge-event': 'ping', 'x-forge-signature-256': sign(body) },
      chunks: [body.subarray(0, 1000), body.subarray(1000)],
    });
    expect(reply.status).to.equal(202);
    expect(setup.seen[0]!.body.equals(body)).to.equal(true);
    expect(setup.seen[0]!.url).to.equal('/api/forge/webhook?source=ci');
    expect(setup.seen[0]!.headers['transfer-encoding']).to.equal(undefined);
  });

  it('unsigned, badly signed or malformed deliveries, or another method, never reach the app', async () => {
    const cases: Array<[number, Promise<{ status: number }>]> = [
      [
        401,
        request(setup.url, { headers: { 'content-type': 'application/json', 'x-forge-event': 'push' }, body: PUSH }),
      ],
      [401, deliver(setup.url, 'push', PUSH, { 'x-forge-signature-256': sign(PUSH, 'another secret') })],
      [401, deliver(setup.url, 'push', PUSH, { 'x-forge-signature-256': sign(PUSH).toUpperCase() })],
      [401, deliver(setup.url, 'push', PUSH, { 'x-forge-signature-256': sign(`${PUSH.toString('latin1')} `) })],
      [400, deliver(setup.url, 'push', '[1,2,3]')],
      [400, deliver(setup.url, 'push', '{"unterminated": ')],
      [400, deliver(setup.url, 'push', Buffer.from([0x7b, 0xff, 0x7d]))],
      [405, request(setup.url, { method: 'PUT', headers: { 'x-forge-signature-256': sign(PUSH) }, body: PUSH })],
    ];
    for (const [status, reply] of cases) expect((await reply).status).to.equal(status);
    expect(setup.seen).to.have.length(0);
  });

  it('a spoofed X-Gatehouse-Webhook-Verified (any spelling) and identity headers are stripped', async () => {
    const reply = await deliver(setup.url, 'push', PUSH, {
      'X-Gatehouse-Webhook-Verified': 'spoofed',
      x_gatehouse_webhook_verified: 'spoofed',
      'X.Gatehouse.Webhook.Verified': 'spoofed',
      'X-PLATFORM-CLIENT-PRINCIPAL-NAME': 'admin',
      'X-MS-CLIENT-PRINCIPAL-ID': 'admin',
      'X-Forwarded-For': '6.6.6.6',
    });
    expect(reply.status).to.equal(202);
    const [got] = setup.seen;
    const names = got!.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    expect(names.filter((n) => n.replace(/[_.]/g, '-') === 'x-gatehouse-webhook-verified')).to.deep.equal([
      'x-gatehouse-webhook-verified',
    ]);
    expect(got!.headers['x-gatehouse-webhook-verified']).to.equal('true');
    expect(got!.headers['x-platform-client-principal-name']).to.equal(undefined);
    expect(got!.headers['x-ms-client-principal-id']).to.equal(undefined);
    expect(got!.headers['x-forwarded-for']).to.equal('127.0.0.1');
  });

  it('the app’s status comes back as it is: 4xx remembered, 5xx passed back and not remembered', async () => {
    setup.answer = (_req, res) =>
      res.writeHead(422, { 'content-type': 'application/json' }).end('{"error":"unknown repository"}');
    const id = randomUUID();
    const first = await deliver(setup.url, 'push', PUSH, { 'x-forge-delivery': id });
    expect([first.status, first.text]).to.deep.equal([422, '{"error":"unknown repository"}']);
    setup.answer = queued;
    const again = await deliver(setup.url, 'push', PUSH, { 'x-forge-delivery': id });
    expect([again.status, again.text]).to.deep.equal([422, '{"error":"unknown repository"}']);
    expect(setup.seen).to.have.length(1);

    setup.answer = (_req, res) =>
      res.writeHead(500, { 'content-type': 'text/plain', 'retry-after': '30' }).end('database down');
    const failing = randomUUID();
    const failed = await deliver(setup.url, 'push', PUSH, { 'x-forge-delivery': failing });
    expect([failed.status, failed.text, failed.headers['retry-after']]).to.deep.equal([500, 'database down', '30']);
    setup.answer = queued;
    const retried = await deliver(setup.url, 'push', PUSH, { 'x-forge-delivery': failing });
    expect(retried.status).to.equal(202);
    expect(setup.seen).to.have.length(3);
  });

  it("408 and 429 from the app are passed back and not remembered: the sender's retry reaches the app again", async () => {
    for (const status of [408, 429]) {
      setup.seen.length = 0;
      setup.answer = (_req, res) =>
        res.writeHead(status, { 'content-type': 'text/plain', 'retry-after': '7' }).end('later, please');
      const id = randomUUID();
      const first = await deliver(setup.url, 'push', PUSH, { 'x-forge-delivery': id });
      expect([first.status, first.text, first.headers['retry-after']], String(status)).to.deep.equal([
        status,
        'later, please',
        '7',
      ]);
      setup.answer = queued;
      expect((await deliver(setup.url, 'push', PUSH, { 'x-forge-delivery': id })).status, String(status)).to.equal(202);
      expect(setup.seen, String(status)).to.have.length(2);
    }
  });

  it('a redelivery of a remembered id is not forwarded again: it gets the first answer', async () => {
    let n = 0;
    setup.answer = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ run: ++n }));
    const id = randomUUID();
    const replies = await Promise.all([
      deliver(setup.url, 'push', PUSH, { 'x-forge-delivery': id }),
      deliver(setup.url, 'push', PUSH, { 'x-forge-delivery': id }),
    ]);
    const later = await deliver(setup.url, 'push', PUSH, { 'x-forge-delivery': id });
    for (const reply of [...replies, later]) expect([reply.status, reply.json]).to.deep.equal([200, { run: 1 }]);
    expect(setup.seen).to.have.length(1);
    // The same id with other bytes is no redelivery: 409, and the app never sees it.
    const other = await deliver(setup.url, 'push', '{"other":true}', { 'x-forge-delivery': id });
    expect(other.status).to.equal(409);
    expect(setup.seen).to.have.length(1);
  });

  it('an answer longer than 64 KiB comes back cut at 64 KiB', async () => {
    setup.answer = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('y'.repeat(200_000));
    const reply = await deliver(setup.url, 'ping', '{}', { 'x-forge-delivery': randomUUID() });
    expect(reply.status).to.equal(200);
    expect(reply.text).to.equal('y'.repeat(64 * 1024));
  });

  describe('GitHub’s header names', () => {
    it('a delivery signed by @octokit/webhooks-methods with X-Hub-Signature-256, X-GitHub-Event and X-GitHub-Delivery reaches the app', async () => {
      const text = PUSH.toString('utf8');
      const signature = await octokitSign(SECRET, text);
      const id = randomUUID();
      const headers = {
        'content-type': 'application/json',
        'x-hub-signature-256': signature,
        'x-github-event': 'push',
        'x-github-delivery': id,
      };
      const reply = await request(setup.url, { headers, body: PUSH });
      expect(reply.status).to.equal(202);
      expect(setup.seen).to.have.length(1);
      expect(setup.seen[0]!.body.equals(PUSH)).to.equal(true);
      expect(setup.seen[0]!.headers['x-hub-signature-256']).to.equal(signature);
      expect(setup.seen[0]!.headers['x-github-delivery']).to.equal(id);
      expect(setup.seen[0]!.headers['x-gatehouse-webhook-verified']).to.equal('true');
      // X-GitHub-Delivery de-duplicates as X-Forge-Delivery does, and a conflict names the header it came in.
      expect((await request(setup.url, { headers, body: PUSH })).status).to.equal(202);
      expect(setup.seen).to.have.length(1);
      const other = Buffer.concat([PUSH, Buffer.from(' ')]); // the same id, other bytes
      const conflicting = await request(setup.url, {
        headers: { ...headers, 'x-hub-signature-256': await octokitSign(SECRET, other.toString('utf8')) },
        body: other,
      });
      expect(conflicting.status).to.equal(409);
      expect(conflicting.json).to.deep.equal({
        error: 'This X-GitHub-Delivery id was already used for a different payload.',
      });
    });

    it('a wrong X-Hub-Signature-256 is a 401 and reaches nothing', async () => {
      const reply = await request(setup.url, {
        headers: {
          'content-type': 'application/json',
          'x-hub-signature-256': await octokitSign('wrong', PUSH.toString()),
          'x-github-event': 'push',
        },
        body: PUSH,
      });
      expect(reply.status).to.equal(401);
      expect(setup.seen).to.have.length(0);
    });

    it('both families: accepted when both signatures verify and event and id agree', async () => {
      const id = randomUUID();
      const reply = await deliver(setup.url, 'push', PUSH, {
        'x-hub-signature-256': sign(PUSH),
        'x-github-event': 'push',
        'x-forge-delivery': id,
        'x-github-delivery': id,
      });
      expect(reply.status).to.equal(202);
      expect(setup.seen).to.have.length(1);
    });

    it('both families disagreeing are refused and reach nothing: a signature that fails (401), events or ids that differ (400)', async () => {
      const cases: Array<[number, Record<string, string>]> = [
        [401, { 'x-hub-signature-256': sign(PUSH, 'another secret') }],
        [401, { 'x-hub-signature-256': 'sha1=abc' }],
        [401, { 'x-hub-signature-256': '' }],
        [400, { 'x-hub-signature-256': sign(PUSH), 'x-github-event': 'ping' }],
        [400, { 'x-github-event': 'Push' }],
        [400, { 'x-forge-delivery': 'one', 'x-github-delivery': 'two' }],
      ];
      for (const [status, extra] of cases) {
        const reply = await deliver(setup.url, 'push', PUSH, extra);
        expect(reply.status, JSON.stringify(extra)).to.equal(status);
      }
      const disagreeing = await deliver(setup.url, 'push', PUSH, { 'x-github-event': 'issues' });
      expect(disagreeing.json).to.deep.equal({
        error: 'X-Forge-Event and X-GitHub-Event disagree; send one, or the same value in both.',
      });
      expect(setup.seen).to.have.length(0);
    });
  });
});

describe('webhook forwarding: the app down or slow, and the settings', function () {
  this.timeout(20_000);

  it('the app down → 502 with gatehouse’s own JSON error', async () => {
    const setup = await startSetup();
    try {
      await setup.stopApp();
      const id = randomUUID();
      const reply = await deliver(setup.url, 'push', PUSH, { 'x-forge-delivery': id });
      expect(reply.status).to.equal(502);
      expect(reply.json).to.deep.equal({ error: 'The app could not be reached; the delivery was not passed on.' });
    } finally {
      await setup.close();
    }
  });

  it('the app silent past the upstream timeout → 504; its later retry is forwarded again', async () => {
    const setup = await startSetup({}, { upstreamTimeoutMs: 300 });
    try {
      setup.answer = (_req, res) => void delay(1_000).then(() => res.writeHead(200).end('late'));
      const id = randomUUID();
      const reply = await deliver(setup.url, 'push', PUSH, { 'x-forge-delivery': id });
      expect(reply.status).to.equal(504);
      expect(reply.json).to.deep.equal({ error: 'The app did not answer the delivery in time.' });
      setup.answer = queued;
      expect((await deliver(setup.url, 'push', PUSH, { 'x-forge-delivery': id })).status).to.equal(202);
      expect(setup.seen).to.have.length(2);
    } finally {
      await setup.close();
    }
  });

  it("the proxy's bound full → 503 with Retry-After, the delivery not passed on and not remembered; its retry goes through once a place is free", async () => {
    const setup = await startSetup({}, { upstreamConnections: 1, upstreamQueue: 0 });
    try {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      setup.answer = (req, res) => {
        if (req.url === '/slow') void held.then(() => res.writeHead(200).end('slow'));
        else queued(req, res);
      };
      const slow = request(setup.url, { path: '/slow' });
      while (setup.seen.length === 0) await delay(10); // the one place is taken
      const id = randomUUID();
      const refused = await deliver(setup.url, 'push', PUSH, { 'x-forge-delivery': id });
      expect(refused.status).to.equal(503);
      expect(refused.headers['retry-after']).to.equal('5');
      expect(refused.json).to.deep.equal({
        error: 'The app has too many requests in flight; please deliver again shortly.',
      });
      expect(setup.seen.map((s) => s.url)).to.deep.equal(['/slow']);
      release();
      expect((await slow).status).to.equal(200);
      const retried = await deliver(setup.url, 'push', PUSH, { 'x-forge-delivery': id });
      expect(retried.status).to.equal(202);
      expect(setup.seen.map((s) => s.url)).to.deep.equal(['/slow', '/api/forge/webhook']);
    } finally {
      await setup.close();
    }
  });

  it("a WebSocket handshake loses a client's X-Gatehouse-Webhook-Verified (any spelling) before it reaches the app", async () => {
    const setup = await startSetup();
    try {
      const handshakes: http.IncomingHttpHeaders[] = [];
      setup.appServer.on('upgrade', (req: http.IncomingMessage, socket) => {
        handshakes.push({ ...req.headers, raw: req.rawHeaders.filter((_, i) => i % 2 === 0).join(',') });
        socket.end(
          'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n',
        );
      });
      const { port } = new URL(setup.url);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(port), '127.0.0.1', () =>
          socket.write(
            'GET /hooks/live HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n' +
              'X-Gatehouse-Webhook-Verified: true\r\nx_gatehouse_webhook_verified: true\r\nX-GATEHOUSE-WEBHOOK-VERIFIED: yes\r\n\r\n',
          ),
        );
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      expect(answer).to.match(/^HTTP\/1\.1 101 /);
      expect(handshakes).to.have.length(1);
      const names = String(handshakes[0]!.raw).toLowerCase().replace(/[_.]/g, '-').split(',');
      expect(names).to.include('upgrade');
      expect(names).not.to.include('x-gatehouse-webhook-verified');
    } finally {
      await setup.close();
    }
  });

  it('GATEHOUSE_WEBHOOK_FORWARD_PATH sends deliveries to another path of the app', async () => {
    const setup = await startSetup({ env: { GATEHOUSE_WEBHOOK_FORWARD_PATH: '/hooks/github' } });
    try {
      expect((await deliver(setup.url, 'push', PUSH)).status).to.equal(202);
      expect(setup.seen.map((s) => s.url)).to.deep.equal(['/hooks/github']);
    } finally {
      await setup.close();
    }
  });

  it('a request of a client’s own to the app’s delivery path, through the proxy, loses its X-Gatehouse-Webhook-Verified', async () => {
    const setup = await startSetup({ env: { GATEHOUSE_WEBHOOK_FORWARD_PATH: '/hooks/github' } });
    try {
      const reply = await request(setup.url, {
        path: '/hooks/github',
        headers: {
          'content-type': 'application/json',
          'X-Gatehouse-Webhook-Verified': 'true',
          x_gatehouse_webhook_verified: 'true',
          'x-github-event': 'push',
        },
        body: PUSH,
      });
      expect(reply.status).to.equal(202);
      expect(setup.seen).to.have.length(1);
      const names = setup.seen[0]!.rawHeaders.filter((_, i) => i % 2 === 0).map((n) =>
        n.toLowerCase().replace(/[_.]/g, '-'),
      );
      expect(names).not.to.include('x-gatehouse-webhook-verified');
      expect(setup.seen[0]!.headers['x-github-event']).to.equal('push');
    } finally {
      await setup.close();
    }
  });

  it('GATEHOUSE_WEBHOOK_FORWARD=off keeps the built-in summary answer, and nothing reaches the app', async () => {
    const setup = await startSetup({ env: { GATEHOUSE_WEBHOOK_FORWARD: 'off' } });
    try {
      const reply = await deliver(setup.url, 'push', PUSH);
      expect(reply.status).to.equal(200);
      expect(reply.json).to.deep.include({ event: 'push', message: 'Processed push with 2 commit(s).' });
      expect(setup.seen).to.have.length(0);
    } finally {
      await setup.close();
    }
  });

  it('a forward path that is no path is a configuration error', async () => {
    for (const bad of ['hooks', '//evil.example/x', '/a?b', '/a b']) {
      await startSetup({ env: { GATEHOUSE_WEBHOOK_FORWARD_PATH: bad } }).then(
        (setup) => setup.close().then(() => expect.fail(`accepted ${bad}`)),
        (error: Error) => expect(error.message).to.match(/GATEHOUSE_WEBHOOK_FORWARD_PATH must be a path/),
      );
    }
  });
});
