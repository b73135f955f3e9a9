// Refusals that reach the client: a body that fails to parse after its headers were accepted is
// answered at once (and the app's request abandoned), a refusal sent while the client is still
// sending its body is read by that client instead of a reset, and nothing hangs at start-up or
// under dripped headers.
import http from 'node:http';
import net from 'node:net';

import { expect } from 'chai';

import { createLogger } from '../../src/logging.js';
import { listenEarly } from '../../src/sidecar/listen.js';
import { serveRequests } from '../../src/sidecar/serve-requests.js';
import { startServer, type RunningServer } from '../../src/sidecar/server.js';
import { rawConnection, rawExchange } from '../support/raw-http.js';
import { recordingApp } from '../support/recording-app.js';
import { startDeployment, type Deployment } from '../support/sign-in.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends `head`, then body bytes until the answer arrives (or `sendMs` has passed), then closes its
 * side: what the client could read. Fails if the connection was reset instead of closed.
 */
async function sendWhileRefused(url: string, head: string, sendMs = 1_500): Promise<string> {
  const { socket, received } = rawConnection(url);
  // A reset (ECONNRESET, or EPIPE on a write) is what a client sees instead of the answer: it may
  // discard what had arrived, and an HTTP client reports the failed write rather than the answer.
  let reset: string | undefined;
  socket.on('error', (error: NodeJS.ErrnoException) => (reset ??= error.code));
  socket.write(head);
  // Sends as fast as the connection takes it, as an upload does, until the answer begins to arrive
  // (an HTTP client reads while it uploads, and stops uploading once it has a final answer).
  let answered = false;
  socket.once('data', () => (answered = true));
  const chunk = Buffer.alloc(64 * 1024, 'x');
  for (const end = Date.now() + sendMs; !answered && Date.now() < end;) {
    if (socket.destroyed || !socket.writable) break;
    if (!socket.write(chunk))
      await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), received, pause(50)]);
  }
  socket.end();
  const response = await received;
  if (reset !== undefined)
    throw new Error(
      `the connection was reset (${reset}) instead of closed; received: ${JSON.stringify(response.slice(0, 80))}`,
    );
  return response;
}

describe('refusals that reach the client', function () {
  this.timeout(60_000);
  const app = recordingApp();
  let deployment: Deployment;
  let host: string;
  before(async () => {
    deployment = await startDeployment({ upstreamHandler: app.handler, headersTimeoutMs: 1_000 });
    host = new URL(deployment.url).host;
  });
  after(() => deployment.close());
  beforeEach(() => void (app.requests.length = 0));

  describe('a body that fails to parse after its headers: 400 at once, the connection closed, the app request abandoned', () => {
    for (const [what, body] of [
      ['a negative chunk size', '-1\r\nx\r\n0\r\n\r\n'],
      ['a chunk size that is not hex', 'zz\r\nx\r\n0\r\n\r\n'],
      ['a chunk without its CRLF', '3\r\nabcdef0\r\n\r\n'],
    ] as const) {
      it(what, async () => {
        // The upstream timeout is 60 s: an answer only at its end would miss the 3 s wait.
        const { response, closed } = await rawExchange(
          deployment.url,
          [`POST /public/upload HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\n\r\n`, body],
          3_000,
        );
        expect(closed, 'closed at once').to.equal(true);
        expect(response).to.match(/^HTTP\/1\.1 400 /);
        expect(response).to.match(/\r\nconnection: close\r\n/i);
        expect(response).to.contain('{"error":"The request is not valid HTTP/1.1."}');
        expect(app.requests, 'no request completed at the app').to.deep.equal([]);
        expect(await waitForNoneInFlight(deployment)).to.equal(true);
      });
    }
  });

  it('a declared body far too large for an /.auth POST: the client, still sending, reads the 413', async () => {
    for (let round = 0; round < 5; round++) {
      const response = await sendWhileRefused(
        deployment.url,
        `POST /.auth/login/dev HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 50000000\r\n\r\n`,
      );
      expect(response, `round ${round}`).to.match(/^HTTP\/1\.1 413 /);
    }
  });

  it('a POST with a large body to a protected path: the client, still sending, reads the 401 challenge', async () => {
    for (let round = 0; round < 5; round++) {
      const response = await sendWhileRefused(
        deployment.url,
        `POST /api/orders HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json\r\nContent-Length: 50000000\r\n\r\n`,
      );
      expect(response, `round ${round}`).to.match(/^HTTP\/1\.1 401 /);
      expect(response).to.match(/\r\nconnection: close\r\n/i);
    }
    expect(app.requests).to.deep.equal([]);
  });

  it('headers dripped a byte at a time are cut within twice the header timeout (408)', async () => {
    const { socket, received } = rawConnection(deployment.url);
    const started = Date.now();
    let open = true;
    void received.then(() => (open = false));
    const head = `GET /public/slow HTTP/1.1\r\nHost: ${host}\r\nX-Drip: ${'a'.repeat(500)}`;
    for (let i = 0; open && i < head.length; i++, await pause(50)) socket.write(head[i]!);
    const response = await received;
    const took = Date.now() - started;
    expect(response).to.match(/^HTTP\/1\.1 408 /);
    expect(took, `closed after ${took} ms`).to.be.below(2_000);
  });

  it("App Service's own identity headers never reach the app, in any spelling, with gatehouse's default prefix", async () => {
    const headers =
      'X-MS-CLIENT-PRINCIPAL: e30=\r\nx-ms-client-principal-id: admin\r\nX_MS_CLIENT_PRINCIPAL_NAME: root\r\nx.ms.client.principal.idp: aad\r\nX-MS-TOKEN-AAD-ACCESS-TOKEN: stolen\r\n';
    const { response } = await rawExchange(deployment.url, [
      `GET /public/ms HTTP/1.1\r\nHost: ${host}\r\n${headers}Connection: close\r\n\r\n`,
    ]);
    expect(response).to.match(/^HTTP\/1\.1 200 /);
    expect(app.requests).to.have.length(1);
    const seen = Object.keys(app.requests[0]!.headers).filter((name) => /ms[-_.]/i.test(name));
    expect(seen).to.deep.equal([]);
  });
});

/** Whether the deployment's forwarder lets go of every request within a second. */
async function waitForNoneInFlight(deployment: Deployment): Promise<boolean> {
  for (const end = Date.now() + 1_000; Date.now() < end; await pause(20))
    if (deployment.gateway.forwarder.inFlight === 0) return true;
  return deployment.gateway.forwarder.inFlight === 0;
}

describe('refusals that reach the client: the webhook receiver', function () {
  this.timeout(30_000);
  let server: RunningServer;
  before(async () => {
    server = await startServer({
      port: 0,
      logger: createLogger('silent'),
      webhook: { secret: 'webhook secret', bodyLimitBytes: 1024 * 1024 },
    });
  });
  after(() => server.close());

  it('chunk extensions over the parser limit are answered 413 at once, not 408 after the body timeout', async () => {
    const { response, closed } = await rawExchange(
      server.url,
      [
        `POST /api/forge/webhook HTTP/1.1\r\nHost: x\r\nX-Forge-Signature-256: sha256=00\r\nTransfer-Encoding: chunked\r\n\r\n`,
        `1;${'e'.repeat(20 * 1024)}\r\nx\r\n0\r\n\r\n`,
      ],
      3_000,
    );
    expect(closed).to.equal(true);
    expect(response).to.match(/^HTTP\/1\.1 413 /);
    expect(response).to.contain("The request body's chunk extensions are too large.");
  });

  it('a delivery declared larger than the limit: the client, still sending, reads the 413', async () => {
    for (let round = 0; round < 5; round++) {
      const response = await sendWhileRefused(
        server.url,
        `POST /api/forge/webhook HTTP/1.1\r\nHost: x\r\nX-Forge-Signature-256: sha256=${'0'.repeat(64)}\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n`,
      );
      expect(response, `round ${round}`).to.match(/^HTTP\/1\.1 413 /);
    }
  });
});

describe('start-up', () => {
  it('a request that arrives before the handler is attached gets 503 with Retry-After, then the handler serves', async () => {
    const listening = await listenEarly('127.0.0.1', 0);
    try {
      const early = await fetch(`${listening.url}/anything`);
      expect(early.status).to.equal(503);
      expect(early.headers.get('retry-after')).to.equal('1');
      expect(await early.json()).to.deep.equal({ error: 'gatehouse is starting: try again in a moment.' });
      serveRequests(
        listening.server,
        (_req: http.IncomingMessage, res: http.ServerResponse) => res.end('served'),
        createLogger('silent'),
      );
      const later = await fetch(`${listening.url}/anything`);
      expect(later.status).to.equal(200);
      expect(await later.text()).to.equal('served');
    } finally {
      await listening.close();
    }
  });

  it('a connection opened before start-up and used after it is served by the handler', async () => {
    const listening = await listenEarly('127.0.0.1', 0);
    try {
      const socket = net.connect(Number(new URL(listening.url).port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      serveRequests(
        listening.server,
        (_req: http.IncomingMessage, res: http.ServerResponse) => res.end('served'),
        createLogger('silent'),
      );
      const answer = new Promise<string>((resolve) => {
        let data = '';
        socket.on('data', (d) => (data += d.toString()));
        socket.on('close', () => resolve(data));
      });
      socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect(await answer).to.match(/^HTTP\/1\.1 200 [\s\S]*served$/);
    } finally {
      await listening.close();
    }
  });
});
