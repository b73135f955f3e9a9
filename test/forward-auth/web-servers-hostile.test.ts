// The shipped web-server configurations (examples/nginx, examples/caddy) against what an outsider
// sends over a raw socket: an upgrade to HTTP/2 followed at once by HTTP/2 frames, WebSocket
// handshakes, a Host that names more than one host or another than the one the server routed on,
// and the client's own copies of the headers that describe the original request. The app behind
// agrees to every protocol switch and echoes what it gets: nothing may reach it unjudged.
import net from 'node:net';

import { expect } from 'chai';

import { Browser } from '../support/browser.js';
import { raw, rawBody, rawExchange } from '../support/raw-http.js';
import { startBehind, type BehindWebServer, type WebServer } from './behind-web-server.js';

/** An HPACK literal header field without indexing, new name (RFC 7541 §6.2.2), for names and values under 127 bytes. */
function literal(name: string, value: string): Buffer {
  return Buffer.concat([
    Buffer.from([0x00, name.length]),
    Buffer.from(name),
    Buffer.from([value.length]),
    Buffer.from(value),
  ]);
}

/** An HTTP/2 frame (RFC 9113 §4.1). */
function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(stream, 5);
  return Buffer.concat([header, payload]);
}

/**
 * What a client sends on the connection it expects switched to HTTP/2: the preface, its settings,
 * and a request of its choosing (stream 3: stream 1 is the upgraded request's), with an identity of its choosing.
 */
function http2Request(authority: string): Buffer {
  const headers = Buffer.concat([
    literal(':method', 'DELETE'),
    literal(':scheme', 'http'),
    literal(':path', '/admin'),
    literal(':authority', authority),
    literal('x-platform-client-principal-id', 'bob'),
  ]);
  return Buffer.concat([
    Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
    frame(0x4, 0, 0, Buffer.alloc(0)), // SETTINGS
    frame(0x1, 0x5, 3, headers), // HEADERS, END_STREAM | END_HEADERS
  ]);
}

const WEBSOCKET_HANDSHAKE =
  'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

function status(response: string): number {
  return Number(/^HTTP\/1\.[01] (\d{3}) /.exec(response)?.[1]);
}

/** Opens a connection, sends a WebSocket handshake and reads its answer's head; then `socket` is the tunnel, if it is one. */
function handshake(url: string, path: string, extra = ''): Promise<{ socket: net.Socket; head: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1', () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${new URL(url).host}\r\n${WEBSOCKET_HANDSHAKE}${extra}\r\n`),
    );
    let head = '';
    const onData = (data: Buffer): void => {
      head += data.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      resolve({ socket, head });
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`closed after ${JSON.stringify(head)}`)));
  });
}

/** Bytes `socket` receives until `expected` has arrived. */
function echoOf(socket: net.Socket, expected: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    socket.on('data', (data: Buffer) => {
      seen += data.toString('latin1');
      if (seen.includes(expected)) resolve(seen);
    });
    socket.once('close', () => reject(new Error(`closed after ${JSON.stringify(seen)}`)));
  });
}

for (const which of ['nginx', 'caddy'] as const satisfies readonly WebServer[]) {
  describe(`forward authentication behind ${which}, as an outsider sends requests (examples/${which})`, function () {
    this.timeout(60_000);
    let deployment: BehindWebServer;
    let host: string;
    let cookie: string;

    before(async () => {
      deployment = await startBehind(which);
      host = new URL(deployment.url).host;
      // Signed in through the web server, as a browser is.
      const browser = new Browser();
      const hops = await browser.follow(`${deployment.url}/reports`);
      await browser.submitForm(hops.at(-1)!, /\/login$/, { username: 'demo', password: 'demo' });
      cookie = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
    });
    after(() => deployment?.close());

    /** What the app got while `step` ran: requests, and bytes past a protocol switch. */
    async function appGets(step: () => Promise<void>): Promise<{ requests: unknown[]; tunnelled: string }> {
      const requests = deployment.seen.length;
      const tunnelled = deployment.tunnelled.length;
      await step();
      return {
        requests: deployment.seen.slice(requests),
        tunnelled: Buffer.concat(deployment.tunnelled.slice(tunnelled)).toString('latin1'),
      };
    }

    const H2C_ATTEMPTS = [
      {
        name: 'curl --http2 on an excluded path, anonymous',
        path: '/public/x',
        headers: 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n',
      },
      {
        name: 'H2C with Connection: upgrade alone, on /health',
        path: '/health',
        headers: 'Connection: upgrade\r\nUpgrade: H2C\r\n',
      },
      {
        name: 'h2c signed in',
        path: '/reports',
        headers: 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n',
        signedIn: true,
      },
    ];
    for (const attempt of H2C_ATTEMPTS) {
      it(`an upgrade to h2c is refused, and the HTTP/2 frames sent after it reach nothing: ${attempt.name}`, async () => {
        let response = '';
        const got = await appGets(async () => {
          const request =
            `GET ${attempt.path} HTTP/1.1\r\nHost: ${host}\r\n${attempt.headers}` +
            `${attempt.signedIn ? `Cookie: ${cookie}\r\n` : ''}Accept: application/json\r\n\r\n`;
          ({ response } = await rawExchange(deployment.url, [request, http2Request(host)], 2000));
        });
        expect(status(response), response).to.equal(400);
        expect(got.requests).to.deep.equal([]);
        expect(got.tunnelled).to.equal('');
      });
    }

    it('a WebSocket handshake signed in reaches the app with the identity, and the tunnel carries bytes both ways', async () => {
      let tunnel: { socket: net.Socket; head: string } | undefined;
      const got = await appGets(async () => {
        tunnel = await handshake(deployment.url, '/socket', `Cookie: ${cookie}\r\n`);
        const echoed = echoOf(tunnel.socket, 'hello through the tunnel');
        tunnel.socket.write('hello through the tunnel');
        await echoed;
      });
      tunnel!.socket.destroy();
      expect(status(tunnel!.head), tunnel!.head).to.equal(101);
      expect(got.requests).to.have.length(1);
      const seen = got.requests[0] as { url: string; upgraded?: true; headers: Record<string, string> };
      expect(seen).to.include({ url: '/socket', upgraded: true });
      expect(seen.headers).to.include({ upgrade: 'websocket', 'x-platform-client-principal-id': 'demo' });
      expect(got.tunnelled).to.equal('hello through the tunnel');
    });

    it('a WebSocket handshake without a session is refused (401); on an excluded path it is anonymous', async () => {
      let refused = '';
      const got = await appGets(async () => {
        refused = await raw(
          deployment.url,
          `GET /socket HTTP/1.1\r\nHost: ${host}\r\n${WEBSOCKET_HANDSHAKE}\r\n`,
          (r) => r.includes('Authentication required.'),
        );
      });
      expect(status(refused), refused).to.equal(401);
      expect(got.requests).to.deep.equal([]);
      const anonymous = await handshake(deployment.url, '/public/socket');
      anonymous.socket.destroy();
      expect(status(anonymous.head), anonymous.head).to.equal(101);
      const seen = deployment.seen.at(-1)!;
      expect(seen).to.include({ url: '/public/socket', upgraded: true });
      expect(Object.keys(seen.headers).filter((name) => name.startsWith('x-platform-'))).to.deep.equal([]);
    });

    it("a Host that lists more than one host is refused (400), even when the first is the session's", async () => {
      for (const listed of [`${host},evil.example`, `${host}, evil.example`]) {
        let response = '';
        const got = await appGets(async () => {
          ({ response } = await rawExchange(
            deployment.url,
            [`GET /reports HTTP/1.1\r\nHost: ${listed}\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`],
            2000,
          ));
        });
        expect(status(response), `${listed}: ${response}`).to.equal(400);
        expect(got.requests).to.deep.equal([]);
      }
    });

    it('a request whose target names another host than its Host header never reaches the app with the session', async () => {
      let response = '';
      const got = await appGets(async () => {
        ({ response } = await rawExchange(
          deployment.url,
          [
            `GET http://evil.example/reports HTTP/1.1\r\nHost: ${host}\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`,
          ],
          2000,
        ));
      });
      if (which === 'nginx') {
        // nginx routes on the target's host and would send the Host header on: refused instead.
        expect(status(response), response).to.equal(400);
        expect(got.requests).to.deep.equal([]);
      } else {
        // Caddy takes the target's host as the request's host (the test's site answers for another host itself).
        for (const request of got.requests as Array<{ headers: Record<string, string> }>) {
          expect(request.headers.host).to.equal('evil.example');
          expect(request.headers).not.to.have.property('x-platform-client-principal-id');
        }
      }
    });

    it("the client's own original-request headers never reach the app", async () => {
      const CLIENT_CLAIMS = {
        'X-Original-URI': '/admin',
        'X-Original-Method': 'DELETE',
        'X-Original-Host': 'evil.example',
        'X-Original-Proto': 'https',
        'X-Original-For': '203.0.113.9',
        'X-Forwarded-Uri': '/admin',
        'X-Forwarded-Method': 'DELETE',
        'X-Forwarded-Prefix': '/admin',
        Forwarded: 'for=203.0.113.9;host=evil.example;proto=https',
      };
      for (const [path, credentials] of [
        ['/public/x', {}],
        ['/reports', { cookie }],
      ] as const) {
        for (const [name, value] of Object.entries(CLIENT_CLAIMS)) {
          const answer = await new Browser().request(`${deployment.url}${path}`, {
            headers: { [name]: value, ...credentials },
          });
          expect(answer.status, `${name} on ${path}: ${answer.body}`).to.equal(200);
          const headers = (JSON.parse(answer.body) as { headers: Record<string, string> }).headers;
          expect(headers, `${name} on ${path}`).not.to.have.property(name.toLowerCase());
        }
      }
    });

    it('a path whose segments end in dots or blanks is no excluded path: it is challenged, and nothing reaches the app', async () => {
      for (const path of ['/public/..%20/reports', '/public/.../reports', '/public/x%20/y', '/public/x./y']) {
        let response = '';
        const got = await appGets(async () => {
          ({ response } = await rawExchange(
            deployment.url,
            [`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json\r\nConnection: close\r\n\r\n`],
            2000,
          ));
        });
        expect(got.requests, path).to.deep.equal([]);
        expect(status(response), `${path}: ${rawBody(response)}`).to.be.oneOf([400, 401]);
      }
    });
  });
}
