// `Expect: 100-continue`: the client uploads only after a "100 Continue". gatehouse decides first,
// so a request it refuses is answered at once, before the client has sent any of its body.
import { createHash } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';

import { expect } from 'chai';

import { startServer } from '../../src/sidecar/server.js';
import { createLogger } from '../../src/logging.js';
import { Browser } from '../support/browser.js';
import { SECRET, sign } from '../support/http.js';
import { signIn, startDeployment, type Deployment } from '../support/sign-in.js';

/** A keep-alive connection that reads answers one HTTP message head at a time. */
class Connection {
  readonly socket: net.Socket;
  #received = Buffer.alloc(0);
  #waiting: (() => void) | undefined;
  closed = false;

  constructor(url: string) {
    this.socket = net.connect(Number(new URL(url).port), '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => {
      this.#received = Buffer.concat([this.#received, chunk]);
      this.#waiting?.();
    });
    this.socket.on('error', () => {});
    this.socket.on('close', () => {
      this.closed = true;
      this.#waiting?.();
    });
  }

  /** The next message: its head and the body its Content-Length announces (none for a 1xx), or undefined if the connection closed first. */
  async next(): Promise<{ head: string; body: string } | undefined> {
    for (;;) {
      const end = this.#received.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = this.#received.subarray(0, end).toString('latin1');
        const length = /^HTTP\/1\.1 1/.test(head) ? 0 : Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (this.#received.length >= end + 4 + length) {
          const body = this.#received.subarray(end + 4, end + 4 + length).toString('utf8');
          this.#received = this.#received.subarray(end + 4 + length);
          return { head, body };
        }
      }
      if (this.closed) return undefined;
      await new Promise<void>((resolve) => (this.#waiting = resolve));
    }
  }

  /** Whether the server has closed the connection within `ms`. */
  async closesWithin(ms: number): Promise<boolean> {
    if (!this.closed)
      await Promise.race([
        new Promise((resolve) => this.socket.once('close', resolve)),
        new Promise((resolve) => setTimeout(resolve, ms)),
      ]);
    return this.closed;
  }
}

function head(method: string, path: string, host: string, headers: Record<string, string>): string {
  return `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
}

describe('Expect: 100-continue', function () {
  this.timeout(30_000);
  let deployment: Deployment;
  let cookie: string;
  const uploads: Array<{ length: number; sha256: string }> = [];
  before(async () => {
    deployment = await startDeployment({
      upstreamHandler: (req, res) => {
        const hash = createHash('sha256');
        let length = 0;
        req.on('data', (chunk: Buffer) => {
          hash.update(chunk);
          length += chunk.length;
        });
        req.on('end', () => {
          uploads.push({ length, sha256: hash.digest('hex') });
          const answer = JSON.stringify({ user: req.headers['x-platform-client-principal-id'] ?? null });
          res
            .writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(answer)) })
            .end(answer);
        });
      },
    });
    const browser = new Browser();
    await signIn(browser, deployment);
    cookie = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
  });
  after(() => deployment.close());

  const host = () => new URL(deployment.url).host;

  it('a request gatehouse refuses is answered at once, without a 100 and before any body is sent; the connection closes', async () => {
    const before = uploads.length;
    const connection = new Connection(deployment.url);
    connection.socket.write(
      head('POST', '/upload', host(), {
        Accept: 'application/json',
        'Content-Length': String(50 * 1024 * 1024),
        Expect: '100-continue',
      }),
    );
    const answer = await connection.next();
    expect(answer!.head).to.match(/^HTTP\/1\.1 401 /);
    expect(answer!.head).to.match(/\r\nConnection: close/i);
    expect(JSON.parse(answer!.body)).to.deep.equal({ error: 'Authentication required.' });
    // The client may or may not send the body it announced: the connection is not used again.
    expect(await connection.closesWithin(5000)).to.equal(true);
    expect(uploads.length - before, 'nothing reached the app').to.equal(0);
  });

  it('a signed-in upload gets the 100, then streams to the app intact, and the connection stays open', async () => {
    const body = Buffer.alloc(3 * 1024 * 1024, 'gatehouse');
    const connection = new Connection(deployment.url);
    connection.socket.write(
      head('POST', '/upload', host(), {
        Cookie: cookie,
        'Content-Type': 'application/octet-stream',
        'Content-Length': String(body.length),
        Expect: '100-continue',
      }),
    );
    const interim = await connection.next();
    expect(interim!.head).to.equal('HTTP/1.1 100 Continue');
    connection.socket.write(body);
    const answer = await connection.next();
    expect(answer!.head).to.match(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(answer!.body)).to.deep.equal({ user: 'demo' });
    expect(uploads.at(-1)).to.deep.equal({
      length: body.length,
      sha256: createHash('sha256').update(body).digest('hex'),
    });
    // Kept alive: the next request on the same connection is answered.
    connection.socket.write(head('GET', '/next', host(), { Cookie: cookie }));
    expect((await connection.next())!.head).to.match(/^HTTP\/1\.1 200 /);
    connection.socket.destroy();
  });

  it('a token exchange (an /.auth POST gatehouse reads itself) gets the 100, then its answer', async () => {
    const body = JSON.stringify({ access_token: 'not-a-token-the-provider-knows' });
    const connection = new Connection(deployment.url);
    connection.socket.write(
      head('POST', '/.auth/login/dev', host(), {
        'Content-Type': 'application/json',
        'Content-Length': String(body.length),
        Expect: '100-continue',
      }),
    );
    expect((await connection.next())!.head).to.equal('HTTP/1.1 100 Continue');
    connection.socket.write(body);
    const answer = await connection.next();
    expect(answer!.head).to.match(/^HTTP\/1\.1 401 /);
    expect(JSON.parse(answer!.body)).to.have.property('error');
    connection.socket.destroy();
  });

  it('a webhook delivery gets the 100, then is received (the webhook-only server)', async () => {
    const running = await startServer({
      port: 0,
      logger: createLogger('silent'),
      webhook: { secret: SECRET, env: {} },
    });
    try {
      const body = JSON.stringify({ zen: 'Keep it logically awesome.' });
      const connection = new Connection(running.url);
      connection.socket.write(
        head('POST', '/api/forge/webhook', new URL(running.url).host, {
          'Content-Type': 'application/json',
          'Content-Length': String(body.length),
          'X-Forge-Event': 'ping',
          'X-Forge-Signature-256': sign(body),
          Expect: '100-continue',
        }),
      );
      expect((await connection.next())!.head).to.equal('HTTP/1.1 100 Continue');
      connection.socket.write(body);
      expect((await connection.next())!.head).to.match(/^HTTP\/1\.1 200 /);
      connection.socket.destroy();
    } finally {
      await running.close();
    }
  });

  it('a delivery the receiver refuses before reading it (no secret configured) gets no 100', async () => {
    const connection = new Connection(deployment.url);
    connection.socket.write(
      head('POST', '/api/forge/webhook', host(), {
        'Content-Type': 'application/json',
        'Content-Length': '1000000',
        'X-Forge-Event': 'ping',
        'X-Forge-Signature-256': sign('x'),
        Expect: '100-continue',
      }),
    );
    const answer = await connection.next();
    expect(answer!.head).to.match(/^HTTP\/1\.1 500 /);
    expect(JSON.parse(answer!.body)).to.deep.equal({ error: 'Server is not configured with FORGE_WEBHOOK_SECRET.' });
    expect(await connection.closesWithin(5000)).to.equal(true);
  });

  it('node http clients that wait for the 100 (expect: 100-continue) complete signed-in uploads', async () => {
    const body = Buffer.alloc(256 * 1024, 'x');
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        `${deployment.url}/upload`,
        {
          method: 'POST',
          agent: false,
          headers: { cookie, expect: '100-continue', 'content-length': String(body.length) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('continue', () => req.end(body));
      req.on('error', reject);
    });
    expect(status).to.equal(200);
    expect(uploads.at(-1)!.length).to.equal(body.length);
  });
});
