// Requests node's HTTP parser refuses never reach a request listener. gatehouse still answers
// each with a JSON error and the connection closed, logs it, and never logs what the request
// carried; a refusal behind pipelined requests waits for their answers.
import http from 'node:http';
import net from 'node:net';

import { expect } from 'chai';

import { createLogger } from '../../src/logging.js';
import { answerClientError } from '../../src/sidecar/client-errors.js';
import { startServer } from '../../src/sidecar/server.js';
import { listen } from '../support/http.js';
import { capturingLogger, type CapturedLogs } from '../support/logs.js';
import { connectionsLeftAfter, openConnections, raw, rawBody } from '../support/raw-http.js';
import { startDeployment, type Deployment } from '../support/sign-in.js';

/** The status line of every answer in `received`, in order. */
function statuses(received: string): number[] {
  return [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
}

/** The body of the last answer in `received` (the refusal, behind any pipelined answers). */
function lastBody(received: string): string {
  return rawBody(received.slice(received.lastIndexOf('HTTP/1.1 ')));
}

describe('requests node cannot parse', function () {
  this.timeout(30_000);
  let logs: CapturedLogs;
  let deployment: Deployment;
  let host: string;
  before(async () => {
    logs = capturingLogger('info');
    deployment = await startDeployment({ logger: logs.logger });
    host = new URL(deployment.url).host;
  });
  after(() => deployment.close());

  const cases = [
    {
      name: 'a NUL byte in a header value',
      request: (h: string) =>
        `GET /protected HTTP/1.1\r\nHost: ${h}\r\nCookie: PlatformAuthSession=secret-cookie-value\r\nX-Note: a\u0000b\r\n\r\n`,
      status: 400,
      error: /not valid HTTP\/1\.1/,
      reason: 'malformed request',
    },
    {
      name: 'a space in a header name',
      request: (h: string) =>
        `GET /protected?secret-query=1 HTTP/1.1\r\nHost: ${h}\r\nX Note: secret-header-value\r\n\r\n`,
      status: 400,
      error: /not valid HTTP\/1\.1/,
      reason: 'malformed request',
    },
    {
      name: 'a request line that is not HTTP',
      request: () => 'HELLO THERE secret-garbage-value\r\n\r\n',
      status: 400,
      error: /not valid HTTP\/1\.1/,
      reason: 'malformed request',
    },
    {
      name: 'headers over 16 KiB (a cookie too large)',
      request: (h: string) =>
        `GET /protected HTTP/1.1\r\nHost: ${h}\r\nCookie: big=secret-cookie-${'c'.repeat(20_000)}\r\n\r\n`,
      status: 431,
      error: /headers are too large \(over 16384 bytes/,
      reason: 'request headers too large',
    },
  ];

  for (const c of cases) {
    it(`${c.name}: ${c.status} with a JSON error, the connection closed, logged without what it carried`, async () => {
      const before = deployment.upstream.requests.length;
      let received = '';
      const lines = await logs.during(async () => (received = await raw(deployment.url, c.request(host))));
      expect(statuses(received)).to.deep.equal([c.status]);
      expect(received).to.match(/\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
      expect(received).to.match(/\r\nconnection: close\r\n/i);
      expect((JSON.parse(rawBody(received)) as { error: string }).error).to.match(c.error);
      expect(lines.find((l) => l.msg === 'request rejected')).to.include({ reason: c.reason });
      expect(JSON.stringify(lines)).not.to.match(/secret-/);
      expect(deployment.upstream.requests.length, 'the app saw nothing').to.equal(before);
    });
  }

  it('a HEAD request refused: the answer says how long the error would be, without a body', async () => {
    const received = await raw(
      deployment.url,
      `HEAD /protected?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
    );
    expect(statuses(received)).to.deep.equal([431]);
    const length = Number(/\r\ncontent-length: (\d+)\r\n/i.exec(received)![1]);
    expect(length).to.be.greaterThan(0);
    expect(received.endsWith('\r\n\r\n'), 'nothing after the headers').to.equal(true);
  });

  it('behind pipelined requests: their answers first, in order, then the refusal', async () => {
    const received = await raw(
      deployment.url,
      `GET /public/one HTTP/1.1\r\nHost: ${host}\r\n\r\n` +
        `GET /protected HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json\r\n\r\n` +
        `GET /public/two HTTP/1.1\r\nHo st: ${host}\r\n\r\n`,
    );
    // node's own default writes its 400 at once, ahead of answers not yet begun: [400] alone, or [400, 200, ...].
    expect(statuses(received)).to.deep.equal([200, 401, 400]);
    expect(received).to.contain('/public/one');
    expect(lastBody(received)).to.contain('not valid HTTP/1.1');
  });

  it('a client that goes on sending after the refusal: answered once, then cut off', async () => {
    const lines = await logs.during(async () => {
      const socket = net.connect(Number(new URL(deployment.url).port), '127.0.0.1');
      let received = '';
      socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.on('error', () => undefined);
      socket.write(`GET / HTTP/1.1\r\nHo st: ${host}\r\n\r\n`);
      const garbage = setInterval(() => socket.writable && socket.write('more garbage\r\n'), 20);
      await closed;
      clearInterval(garbage);
      expect(statuses(received)).to.deep.equal([400]);
    });
    expect(lines.filter((l) => l.msg === 'request rejected')).to.have.length(1);
  });

  it('a client that reads the refusal but never hangs up loses the connection', async () => {
    expect(await openConnections(deployment.server), 'no connection left over from other tests').to.equal(0);
    // allowHalfOpen: the client does not close its side when gatehouse ends the connection.
    const socket = net.connect({ port: Number(new URL(deployment.url).port), host: '127.0.0.1', allowHalfOpen: true });
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    socket.on('error', () => undefined);
    const ended = new Promise<void>((resolve) => socket.on('end', () => resolve()));
    socket.write(`GET / HTTP/1.1\r\nHo st: ${host}\r\n\r\n`);
    await ended;
    try {
      expect(statuses(received)).to.deep.equal([400]);
      expect(await openConnections(deployment.server), 'half-open, held by the client').to.equal(1);
      // The client stays silent (a byte from it would be refused at once): only gatehouse can close it now.
      expect(await connectionsLeftAfter(deployment.server, 10_000), 'closed by gatehouse').to.equal(0);
    } finally {
      socket.destroy();
    }
  });
});

describe('requests node cannot parse, outside the sidecar', function () {
  this.timeout(30_000);

  it('headers that do not arrive within headersTimeout: 408 with a JSON error, logged', async () => {
    const logs = capturingLogger('info');
    // node checks the headers' deadline every connectionsCheckingInterval: both short, so the test is quick.
    const server = http.createServer(
      { headersTimeout: 300, requestTimeout: 0, connectionsCheckingInterval: 50 },
      (_req, res) => res.end('never'),
    );
    // No request is ever in progress on this server: its requests are answered as they arrive.
    server.on(
      'clientError',
      answerClientError(logs.logger, () => undefined),
    );
    const running = await listen(server);
    try {
      const received = await raw(running.url, 'GET / HTTP/1.1\r\nHost: example\r\nX-Slow: ');
      expect(statuses(received)).to.deep.equal([408]);
      expect(JSON.parse(rawBody(received))).to.deep.equal({ error: "The request's headers did not arrive in time." });
      expect(logs.lines().find((l) => l.msg === 'request rejected')).to.include({
        reason: 'request headers not received in time',
        code: 'ERR_HTTP_REQUEST_TIMEOUT',
      });
    } finally {
      await running.close();
    }
  });

  it('the webhook-only server answers a malformed request with a JSON 400 too', async () => {
    const running = await startServer({ port: 0, logger: createLogger('silent'), webhook: { env: {} } });
    try {
      const received = await raw(
        running.url,
        'POST /webhooks HTTP/1.1\r\nHost: example\r\nX-Forge-Event: pu\u0000sh\r\n\r\n',
      );
      expect(statuses(received)).to.deep.equal([400]);
      expect(JSON.parse(rawBody(received))).to.deep.equal({ error: 'The request is not valid HTTP/1.1.' });
    } finally {
      await running.close();
    }
  });
});
