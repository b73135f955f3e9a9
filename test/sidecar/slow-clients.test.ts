// Clients are bounded by inactivity, never by how long a request takes: an
// upload that keeps moving reaches the app however long it runs, and a client
// that stops sending loses its connection. The small bodies gatehouse reads
// itself (/.auth POSTs) are the exception: they have a deadline in all.
import { expect } from 'chai';

import { rawConnection } from '../support/raw-http.js';
import { startDeployment, type Deployment } from '../support/sign-in.js';

const UPSTREAM_TIMEOUT_MS = 1_500;
/** Far inside the client idle timeout (UPSTREAM_TIMEOUT_MS + 5 s), so only the deadline can end a dripping body. */
const AUTH_BODY_DEADLINE_MS = 600;
const CHUNK = 'x'.repeat(1024);

/** An app that reads the whole body and answers how many bytes it got. */
function countingApp(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): void {
  let bytes = 0;
  req.on('data', (chunk: Buffer) => (bytes += chunk.length));
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ bytes })));
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('slow clients', function () {
  this.timeout(30_000);
  let deployment: Deployment;
  before(async () => {
    deployment = await startDeployment({
      upstreamTimeoutMs: UPSTREAM_TIMEOUT_MS,
      authBodyDeadlineMs: AUTH_BODY_DEADLINE_MS,
      upstreamHandler: countingApp,
    });
  });
  after(() => deployment.close());

  it("node's cap on a whole request (requestTimeout, 5 minutes by default) is lifted; inactivity is what is timed", () => {
    expect(deployment.server.requestTimeout).to.equal(0);
    expect(deployment.server.timeout).to.equal(deployment.gateway.clientIdleTimeoutMs);
    expect(deployment.gateway.clientIdleTimeoutMs).to.be.greaterThan(UPSTREAM_TIMEOUT_MS);
  });

  it('an upload that outlasts the idle timeout but keeps moving reaches the app whole; one that stops gets a 408 and is disconnected', async () => {
    const idle = deployment.gateway.clientIdleTimeoutMs;
    const host = new URL(deployment.url).host;

    // Both at once, so the test takes one idle timeout, not two.
    const moving = (async () => {
      const { socket, received: closed } = rawConnection(deployment.url);
      socket.write(
        `POST /public/upload HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
      );
      const started = Date.now();
      let sent = 0;
      // A chunk every 400 ms (well inside the upstream timeout), for longer than the client idle timeout in all.
      while (Date.now() - started < idle + 1_000) {
        socket.write(`${CHUNK.length.toString(16)}\r\n${CHUNK}\r\n`);
        sent += CHUNK.length;
        await pause(400);
      }
      socket.write('0\r\n\r\n');
      const response = await closed;
      return { response, sent, took: Date.now() - started };
    })();

    const stalled = (async () => {
      const { socket, received: closed } = rawConnection(deployment.url);
      socket.write(`POST /public/upload HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 100000\r\n\r\n${CHUNK}`);
      const started = Date.now();
      // Nothing more is ever sent, and the socket is never closed from this side.
      const response = await closed;
      return { response, took: Date.now() - started };
    })();

    const [whole, cut] = await Promise.all([moving, stalled]);
    expect(whole.took).to.be.greaterThan(idle);
    expect(whole.response).to.match(/^HTTP\/1\.1 200 /);
    expect(whole.response).to.contain(JSON.stringify({ bytes: whole.sent }));

    expect(cut.response).to.match(/^HTTP\/1\.1 408 /);
    expect(cut.response).to.match(/\r\nconnection: close\r\n/i);
    // Closed by gatehouse: not before the body had been silent that long, and not left open for good.
    expect(cut.took).to.be.at.least(UPSTREAM_TIMEOUT_MS - 100);
  });

  /** Sends the head and a first byte, then one byte every 100 ms (never idle) until gatehouse closes the connection. */
  async function drip(path: string, contentType: string, accept: string): Promise<string> {
    const { socket, received: closed } = rawConnection(deployment.url);
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: ${new URL(deployment.url).host}\r\nContent-Type: ${contentType}\r\nAccept: ${accept}\r\nContent-Length: 1000\r\n\r\nx`,
    );
    let open = true;
    void closed.then(() => (open = false));
    const dripping = (async () => {
      while (open) {
        await pause(100);
        if (open && !socket.destroyed) socket.write('x');
      }
    })();
    const response = await closed;
    await dripping;
    return response;
  }

  for (const [what, path, contentType, accept, body] of [
    [
      'a form_post sign-in callback',
      '/.auth/login/dev/callback',
      'application/x-www-form-urlencoded',
      'text/html',
      /did not arrive in time/,
    ],
    [
      'a token exchange',
      '/.auth/login/dev',
      'application/json',
      'application/json',
      /\{"error":"The body did not arrive in time\."\}/,
    ],
  ] as const) {
    it(`${what} whose body keeps dripping gets 408 at the deadline and its connection closed; gatehouse keeps serving`, async () => {
      const response = await drip(path, contentType, accept);
      expect(response).to.match(/^HTTP\/1\.1 408 /);
      expect(response).to.match(/\r\nconnection: close\r\n/i);
      expect(response).to.match(body);
      const after = await fetch(`${deployment.url}/public/after`);
      expect(after.status).to.equal(200);
    });
  }
});
