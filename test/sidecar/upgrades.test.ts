// Only WebSocket handshakes reach the app as upgrades. An app that agreed to `Upgrade: h2c` would
// hand the client an HTTP/2 connection on which every later request passes beside gatehouse (h2c
// smuggling). Any other upgrade is served as an ordinary request: it gets an answer (http-proxy,
// which refuses them, drops the connection) and the app never sees the upgrade.
import net from 'node:net';

import { expect } from 'chai';

import { Browser } from '../support/browser.js';
import { capturingLogger, type CapturedLogs } from '../support/logs.js';
import { connectionsLeftAfter, openConnections, raw, rawBody } from '../support/raw-http.js';
import { signIn, startDeployment, type Deployment } from '../support/sign-in.js';

/** The bytes of an upgrade to HTTP/2 over cleartext, as curl --http2 sends it for an http:// URL. */
function h2cRequest(host: string, path: string, extra = ''): string {
  return `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\nAccept: application/json\r\n${extra}\r\n`;
}

describe('upgrades other than WebSocket (curl --http2, h2c smuggling)', function () {
  this.timeout(30_000);
  let logs: CapturedLogs;
  let deployment: Deployment;
  let host: string;
  /** Upgrades that reached the app as upgrades. */
  let appUpgrades: string[];
  before(async () => {
    appUpgrades = [];
    logs = capturingLogger('info');
    deployment = await startDeployment({
      logger: logs.logger,
      // An app that agrees to any protocol switch, then echoes whatever the client sends: a tunnel past gatehouse.
      upstreamSetup: (server) =>
        server.on('upgrade', (req, socket) => {
          appUpgrades.push(`${req.headers.upgrade} ${req.url}`);
          socket.write(
            `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${req.headers.upgrade}\r\n\r\n`,
          );
          socket.pipe(socket);
        }),
    });
    host = new URL(deployment.url).host;
  });
  after(() => deployment.close());
  beforeEach(() => (appUpgrades.length = 0));

  it('h2c on an excluded path: served as an ordinary request, the upgrade never reaching the app', async () => {
    const before = deployment.upstream.requests.length;
    const received = await raw(deployment.url, h2cRequest(host, '/public/page'));
    expect(received).to.match(/^HTTP\/1\.1 200 /);
    expect(received).to.match(/\r\nconnection: close\r\n/i);
    expect(appUpgrades).to.deep.equal([]);
    const seen = deployment.upstream.requests.slice(before);
    expect(seen.map((r) => r.url)).to.deep.equal(['/public/page']);
    expect(seen[0]!.headers).not.to.have.any.keys('upgrade', 'http2-settings');
    expect(seen[0]!.headers.connection ?? 'keep-alive').not.to.match(/upgrade/i);
  });

  it('h2c on a protected path: challenged like any request', async () => {
    const before = deployment.upstream.requests.length;
    const received = await raw(deployment.url, h2cRequest(host, '/protected'));
    expect(received).to.match(/^HTTP\/1\.1 401 /);
    expect(appUpgrades).to.deep.equal([]);
    expect(deployment.upstream.requests.length).to.equal(before);
  });

  it('h2c signed in: the app gets an ordinary request with the identity headers', async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    const cookie = `Cookie: PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}\r\n`;
    const received = await raw(
      deployment.url,
      h2cRequest(host, '/protected/data', `${cookie}X-PLATFORM-CLIENT-PRINCIPAL-ID: spoofed\r\n`),
    );
    expect(received).to.match(/^HTTP\/1\.1 200 /);
    expect(appUpgrades).to.deep.equal([]);
    const echoed = JSON.parse(rawBody(received)) as { url: string; headers: Record<string, string> };
    expect(echoed.url).to.equal('/protected/data');
    expect(echoed.headers['x-platform-client-principal-id']).to.equal('demo');
    expect(echoed.headers).not.to.have.any.keys('upgrade', 'http2-settings');
  });

  it('an Upgrade that lists WebSocket beside another protocol is not a WebSocket handshake', async () => {
    const received = await raw(
      deployment.url,
      `GET /public/socket HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: h2c, websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
    );
    expect(received).to.match(/^HTTP\/1\.1 200 /);
    expect(appUpgrades).to.deep.equal([]);
  });

  it('a WebSocket upgrade asked with another method than GET is not a WebSocket handshake', async () => {
    const received = await raw(
      deployment.url,
      `DELETE /public/socket HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
    );
    expect(received).to.match(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(rawBody(received))).to.include({ url: '/public/socket' });
    expect(appUpgrades).to.deep.equal([]);
  });

  it('an upgrade other than WebSocket that carries a body: 400 with a JSON error, logged, nothing at the app', async () => {
    const before = deployment.upstream.requests.length;
    const lines = await logs.during(async () => {
      for (const framing of ['Content-Length: 5\r\n', 'Transfer-Encoding: chunked\r\n']) {
        const body = framing.startsWith('Content-Length') ? 'hello' : '5\r\nhello\r\n0\r\n\r\n';
        const received = await raw(
          deployment.url,
          `POST /public/form HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n${framing}\r\n${body}`,
        );
        expect(received).to.match(/^HTTP\/1\.1 400 /);
        expect(JSON.parse(rawBody(received))).to.deep.equal({
          error: 'Only WebSocket upgrades are supported: send this request without the Upgrade header.',
        });
      }
    });
    expect(appUpgrades).to.deep.equal([]);
    expect(deployment.upstream.requests.length).to.equal(before);
    const rejected = lines.filter((l) => l.msg === 'request rejected');
    expect(rejected.map((l) => l.reason)).to.deep.equal([
      'upgrade other than WebSocket with a body',
      'upgrade other than WebSocket with a body',
    ]);
  });

  it('the connection is closed after the answer, even when the client keeps its side open', async () => {
    expect(await openConnections(deployment.server), 'no connection left over from other tests').to.equal(0);
    // allowHalfOpen: the client does not close its side when gatehouse ends the connection.
    const socket = net.connect({ port: Number(new URL(deployment.url).port), host: '127.0.0.1', allowHalfOpen: true });
    try {
      socket.on('error', () => undefined);
      let received = '';
      socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
      const ended = new Promise<void>((resolve) => socket.on('end', () => resolve()));
      socket.write(h2cRequest(host, '/public/half-open'));
      await ended;
      expect(received).to.match(/^HTTP\/1\.1 200 /);
      expect(await connectionsLeftAfter(deployment.server, 10_000), 'still held open by the client').to.equal(0);
    } finally {
      socket.destroy();
    }
  });

  it('a WebSocket handshake on the same deployment still reaches the app as an upgrade', async () => {
    const received = await raw(
      deployment.url,
      `GET /public/socket HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: WebSocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      (seen) => seen.includes('\r\n\r\n'),
    );
    expect(received).to.match(/^HTTP\/1\.1 101 /);
    expect(appUpgrades).to.deep.equal(['WebSocket /public/socket']);
  });
});
