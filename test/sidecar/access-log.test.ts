// The opt-in access log: one line per request gatehouse answered or forwarded, with who made it
// when gatehouse knows, once, and never a query, a cookie or a token.
import { expect } from 'chai';

import { resolveAccessLog } from '../../src/sidecar/access-log.js';
import { Browser } from '../support/browser.js';
import { deliver } from '../support/http.js';
import { capturingLogger, type CapturedLogs } from '../support/logs.js';
import { raw, rawConnection } from '../support/raw-http.js';
import { defaultDocument, signIn, startDeployment, type Deployment } from '../support/sign-in.js';

type Line = Record<string, unknown>;

/**
 * The access lines about `path`, once there is one (written when the answer is done, which may be
 * just after the client has it), and a moment more, so that a second line for the same request
 * would be seen too.
 */
async function accessLines(logs: CapturedLogs, path: string): Promise<Line[]> {
  const lines = () =>
    logs.lines().filter((l) => l.path === path && (l.msg === 'request completed' || l.msg === 'request aborted'));
  for (let waited = 0; lines().length === 0 && waited < 5_000; waited += 10)
    await new Promise((resolve) => setTimeout(resolve, 10));
  await new Promise((resolve) => setTimeout(resolve, 50));
  return lines();
}

describe('access log setting', () => {
  it('is off unless asked for; an empty variable counts as unset', () => {
    expect(resolveAccessLog(undefined, {})).to.equal(false);
    expect(resolveAccessLog(undefined, { GATEHOUSE_ACCESS_LOG: '' })).to.equal(false);
  });

  it('reads on/off, true/false and 1/0 from GATEHOUSE_ACCESS_LOG, in any case; the option wins', () => {
    for (const value of ['on', 'ON', ' On ', 'true', 'TRUE', '1'])
      expect(resolveAccessLog(undefined, { GATEHOUSE_ACCESS_LOG: value }), value).to.equal(true);
    for (const value of ['off', 'Off', 'false', '0', ' off '])
      expect(resolveAccessLog(undefined, { GATEHOUSE_ACCESS_LOG: value }), value).to.equal(false);
    expect(resolveAccessLog(false, { GATEHOUSE_ACCESS_LOG: 'on' })).to.equal(false);
    expect(resolveAccessLog(true, { GATEHOUSE_ACCESS_LOG: 'off' })).to.equal(true);
  });

  it('refuses anything else, naming the variable: a typo must not leave it silently off', () => {
    for (const value of ['yes', 'enabled', 'o n', '2', 'onn', '\u0000on']) {
      expect(() => resolveAccessLog(undefined, { GATEHOUSE_ACCESS_LOG: value }), value).to.throw(
        TypeError,
        `GATEHOUSE_ACCESS_LOG must be on or off (got ${JSON.stringify(value)})`,
      );
    }
  });
});

describe('access log', function () {
  this.timeout(30_000);
  let logs: CapturedLogs;
  let deployment: Deployment;
  let host: string;
  /** Resolves each /protected/slow request the app holds, once the test has seen it arrive. */
  const heldAtTheApp: Array<() => void> = [];
  let appReached: () => void = () => undefined;

  before(async () => {
    logs = capturingLogger('info');
    deployment = await startDeployment({
      logger: logs.logger,
      accessLog: true,
      upstreamHandler: (req, res) => {
        if (req.url === '/public/slow') {
          heldAtTheApp.push(() => res.end('late'));
          appReached();
          return;
        }
        if (req.url === '/public/broken') {
          // The answer begins, then the app breaks off: the client gets half an answer.
          res.writeHead(200, { 'content-length': '1000' }).write('half', () => res.destroy());
          return;
        }
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ url: req.url, id: req.headers['x-platform-client-principal-id'] ?? null }));
      },
      upstreamSetup: (server) =>
        server.on('upgrade', (req, socket) => {
          if (req.url === '/public/declined') {
            socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
            return;
          }
          socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
          socket.pipe(socket);
        }),
    });
    host = new URL(deployment.url).host;
  });
  after(() => deployment.close());

  const awaitLines = (path: string): Promise<Line[]> => accessLines(logs, path);

  function wsHandshake(path: string, extra = ''): string {
    return `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAccept: application/json\r\n${extra}\r\n`;
  }

  it('a signed-in request: method, path, status, duration, the peer, and who it was', async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    const answer = await browser.request(`${deployment.url}/protected/orders?page=2&token=query-secret`);
    expect(answer.status).to.equal(200);
    const [line, ...more] = await awaitLines('/protected/orders');
    expect(more, 'one line per request').to.deep.equal([]);
    expect(line).to.include({
      msg: 'request completed',
      level: 30,
      method: 'GET',
      path: '/protected/orders',
      status: 200,
      remoteAddress: '127.0.0.1',
      userId: 'demo',
      idp: 'dev',
    });
    expect(line!.durationMs).to.be.a('number').and.to.be.at.least(0);
  });

  it('a challenged request and an endpoint gatehouse answers itself: their status, no user', async () => {
    const challenged = new Browser();
    challenged.accept = 'application/json';
    expect((await challenged.request(`${deployment.url}/protected/private?code=query-secret`)).status).to.equal(401);
    const [line] = await awaitLines('/protected/private');
    expect(line).to.include({ msg: 'request completed', method: 'GET', status: 401 });
    expect(line).not.to.have.any.keys('userId', 'idp');

    const browser = new Browser();
    await signIn(browser, deployment);
    expect((await browser.request(`${deployment.url}/.auth/me`)).status).to.equal(200);
    const me = await awaitLines('/.auth/me');
    expect(me.map((l) => [l.msg, l.status])).to.deep.equal([['request completed', 200]]);
  });

  it('an anonymous request to an excluded path and a webhook delivery are logged too', async () => {
    expect((await new Browser().request(`${deployment.url}/public/page`)).status).to.equal(200);
    expect(await awaitLines('/public/page'))
      .to.have.length(1)
      .and.to.have.nested.property('[0].status', 200);
    // Refused (this deployment's receiver has no secret): the receiver's own line says why, the access line what it got.
    const delivery = await deliver(deployment.url, 'push', '{"zen":"hi"}');
    expect(delivery.status).to.equal(500);
    const [line] = await awaitLines('/api/forge/webhook');
    expect(line).to.include({ msg: 'request completed', method: 'POST', status: 500 });
  });

  it('an answer the client left before: aborted, without a status', async () => {
    const reached = new Promise<void>((resolve) => (appReached = resolve));
    const { socket, received } = rawConnection(deployment.url);
    socket.write(`GET /public/slow HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    await reached;
    socket.destroy();
    await received;
    const [line, ...more] = await awaitLines('/public/slow');
    expect(more).to.deep.equal([]);
    expect(line).to.include({ msg: 'request aborted', method: 'GET' });
    expect(line).not.to.have.property('status');
    for (const release of heldAtTheApp.splice(0)) release();
  });

  it('an answer the app broke off: aborted, with the status it had begun with', async () => {
    await raw(deployment.url, `GET /public/broken HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    const [line, ...more] = await awaitLines('/public/broken');
    expect(more).to.deep.equal([]);
    expect(line).to.include({ msg: 'request aborted', status: 200 });
  });

  it('WebSocket handshakes: switched (101, with the user), refused by gatehouse, declined by the app', async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    const cookie = `Cookie: PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}\r\n`;
    expect(
      await raw(deployment.url, wsHandshake('/protected/socket', cookie), (seen) => seen.includes('\r\n\r\n')),
    ).to.match(/^HTTP\/1\.1 101 /);
    const [switched] = await awaitLines('/protected/socket');
    expect(switched).to.include({ msg: 'request completed', method: 'GET', status: 101, userId: 'demo', idp: 'dev' });

    expect(await raw(deployment.url, wsHandshake('/protected/anonymous-socket'))).to.match(/^HTTP\/1\.1 401 /);
    const [refused] = await awaitLines('/protected/anonymous-socket');
    expect(refused).to.include({ msg: 'request completed', status: 401 });
    expect(refused).not.to.have.any.keys('userId');

    expect(await raw(deployment.url, wsHandshake('/public/declined'))).to.match(/^HTTP\/1\.1 403 /);
    expect((await awaitLines('/public/declined')).map((l) => [l.msg, l.status])).to.deep.equal([
      ['request completed', 403],
    ]);
  });

  it('an upgrade served as an ordinary request (h2c) gets its line', async () => {
    const received = await raw(
      deployment.url,
      `GET /public/h2c HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n`,
    );
    expect(received).to.match(/^HTTP\/1\.1 200 /);
    expect((await awaitLines('/public/h2c')).map((l) => [l.msg, l.status])).to.deep.equal([['request completed', 200]]);
  });

  it('hostile paths stay one well-formed line each: quotes, backslashes, encoded line breaks, a long path', async () => {
    const hostile = '/public/"quoted"\\%0d%0a{"msg":"forged"}';
    await raw(deployment.url, `GET ${hostile}?x=1 HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    // Not a canonical path, so no excluded path covers it: challenged (302), like any protected path.
    expect((await awaitLines(hostile)).map((l) => l.status)).to.deep.equal([302]);
    const long = `/public/${'a'.repeat(8000)}`;
    await raw(deployment.url, `GET ${long} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    expect(await awaitLines(long)).to.have.length(1);
    expect(logs.lines().filter((l) => l.msg === 'forged')).to.deep.equal([]);
  });

  it("with no trusted proxy in front, a client's X-Forwarded-For is not logged", async () => {
    await raw(
      deployment.url,
      `GET /public/spoofed-for HTTP/1.1\r\nHost: ${host}\r\nX-Forwarded-For: 203.0.113.9\r\nConnection: close\r\n\r\n`,
    );
    const [line] = await awaitLines('/public/spoofed-for');
    expect(line).to.include({ remoteAddress: '127.0.0.1', status: 200 });
    expect(line).not.to.have.property('forwardedFor');
  });

  it('never logs a query, a cookie, a token or a header value', async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    await browser.request(`${deployment.url}/protected/again?access_token=query-secret`, {
      headers: { authorization: 'Bearer header-secret-token', 'x-custom': 'header-secret-value' },
    });
    await awaitLines('/protected/again');
    const session = browser.cookie(deployment.url, 'PlatformAuthSession')!.value;
    const text = logs.raw();
    for (const secret of ['query-secret', 'header-secret', session]) expect(text).not.to.contain(secret);
  });
});

describe('access log behind a trusted proxy (forwardProxy Standard)', function () {
  this.timeout(30_000);
  let logs: CapturedLogs;
  let deployment: Deployment;
  before(async () => {
    logs = capturingLogger('info');
    deployment = await startDeployment({
      logger: logs.logger,
      accessLog: true,
      document: (issuer) => ({
        ...defaultDocument(issuer),
        httpSettings: { forwardProxy: { convention: 'Standard' } },
      }),
    });
  });
  after(() => deployment.close());

  async function lineFor(path: string, forwardedFor: string | undefined): Promise<Line> {
    const host = new URL(deployment.url).host;
    const header = forwardedFor === undefined ? '' : `X-Forwarded-For: ${forwardedFor}\r\n`;
    await raw(
      deployment.url,
      `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json\r\n${header}Connection: close\r\n\r\n`,
    );
    const [line, ...more] = await accessLines(logs, path);
    expect(more, path).to.deep.equal([]);
    expect(line, `an access line for ${path}`).to.include({ msg: 'request completed' });
    return line!;
  }

  it('logs the address the proxy saw (the last X-Forwarded-For entry), not what the client claimed before it', async () => {
    // Forwarded: the headers the app gets (gatehouse's own entry appended) must not be what is logged.
    expect(await lineFor('/public/through-proxy', '203.0.113.9, 198.51.100.7')).to.include({
      forwardedFor: '198.51.100.7',
      remoteAddress: '127.0.0.1',
      status: 200,
    });
    expect(await lineFor('/protected/through-proxy', '2001:db8::7')).to.include({
      forwardedFor: '2001:db8::7',
      status: 401,
    });
  });

  it('no X-Forwarded-For, an empty last entry, or one too long to be an address: no forwardedFor', async () => {
    for (const [path, value] of [
      ['/public/no-for', undefined],
      ['/public/empty-for', '203.0.113.9, '],
      ['/public/long-for', `203.0.113.9, ${'x'.repeat(65)}`],
    ] as const) {
      expect(await lineFor(path, value), path).not.to.have.property('forwardedFor');
    }
  });
});

describe('access log off (the default)', function () {
  this.timeout(30_000);
  it('writes no access lines', async () => {
    const logs = capturingLogger('info');
    const deployment = await startDeployment({ logger: logs.logger });
    try {
      expect((await new Browser().request(`${deployment.url}/public/page`)).status).to.equal(200);
      const api = new Browser();
      api.accept = 'application/json';
      expect((await api.request(`${deployment.url}/protected`)).status).to.equal(401);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(logs.lines().filter((l) => l.msg === 'request completed' || l.msg === 'request aborted')).to.deep.equal(
        [],
      );
      // The refusal is still logged, as always.
      expect(logs.lines().filter((l) => l.msg === 'request challenged')).to.have.length(1);
    } finally {
      await deployment.close();
    }
  });
});
