// What the verify endpoint says about a request that asks to switch protocols, and about the host
// it names, asked over HTTP as a web server asks it: an upgrade other than WebSocket is refused
// (the web server would pass it on, and the app could switch to a protocol nobody judges), a
// WebSocket handshake is judged like the GET it is, and the host is one host.
import { expect } from 'chai';

import { UPGRADE_REFUSED_MESSAGE } from '../../src/core/http/protocol-upgrade.js';
import { Browser } from '../support/browser.js';
import { raw, rawBody } from '../support/raw-http.js';
import { signIn, startDeployment, type Deployment } from '../support/sign-in.js';

type Convention = 'nginx' | 'forwarded';

/** The upgrades a client may try, as a web server passes them on to verify (Caddy keeps `Connection: Upgrade`, nginx sends none). */
const REFUSED_UPGRADES: ReadonlyArray<{ readonly name: string; readonly headers: string; readonly method?: string }> = [
  {
    name: 'h2c as curl --http2 sends it',
    headers: 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n',
  },
  { name: 'H2C upper case, Connection: upgrade alone', headers: 'Connection: upgrade\r\nUpgrade: H2C\r\n' },
  { name: 'h2c without Connection (as nginx passes it)', headers: 'Upgrade: h2c\r\n' },
  { name: 'h2c behind WebSocket in a list', headers: 'Connection: Upgrade\r\nUpgrade: websocket, h2c\r\n' },
  { name: 'Upgrade sent twice', headers: 'Connection: Upgrade\r\nUpgrade: websocket\r\nUpgrade: h2c\r\n' },
  { name: 'another protocol', headers: 'Connection: Upgrade\r\nUpgrade: TLS/1.2\r\n' },
  { name: 'WebSocket asked with POST', headers: 'Connection: Upgrade\r\nUpgrade: websocket\r\n', method: 'POST' },
];

const WEBSOCKET_HANDSHAKE =
  'Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

describe('forward auth: upgrades and hosts the verify endpoint is asked about', function () {
  this.timeout(30_000);
  let deployment: Deployment;
  let host: string;
  let cookie: string;

  before(async () => {
    deployment = await startDeployment();
    host = new URL(deployment.url).host;
    const browser = new Browser();
    await signIn(browser, deployment);
    cookie = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
  });
  after(() => deployment.close());

  /** Asks verify over a raw connection (a client library would not send an Upgrade): the whole answer. */
  function verify(
    convention: Convention,
    uri: string,
    options: { method?: string; extra?: string; originalHost?: string } = {},
  ): Promise<string> {
    const method = options.method ?? 'GET';
    const original =
      convention === 'nginx'
        ? `X-Original-URI: ${uri}\r\nX-Original-Method: ${method}\r\n`
        : `X-Forwarded-Uri: ${uri}\r\nX-Forwarded-Method: ${method}\r\n`;
    const extra = options.extra ?? '';
    // Closed after the answer: by the client, or by gatehouse after an upgrade request.
    const close = /^Connection:/im.test(extra) ? '' : 'Connection: close\r\n';
    return raw(
      deployment.url,
      `GET /.auth/verify HTTP/1.1\r\nHost: ${host}\r\n${original}X-Forwarded-Host: ${options.originalHost ?? host}\r\n` +
        `X-Forwarded-Proto: http\r\nAccept: application/json\r\n${extra}${close}\r\n`,
    );
  }

  function status(answer: string): number {
    return Number(/^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1]);
  }

  for (const upgrade of REFUSED_UPGRADES) {
    it(`an upgrade other than WebSocket is refused, anonymous or signed in, excluded path or not: ${upgrade.name}`, async () => {
      for (const path of ['/public/x', '/health', '/reports']) {
        for (const credentials of ['', `Cookie: ${cookie}\r\n`]) {
          const options = { method: upgrade.method ?? 'GET', extra: `${upgrade.headers}${credentials}` };
          const forwarded = await verify('forwarded', path, options);
          expect(status(forwarded), `${path} ${credentials}`).to.equal(400);
          expect(JSON.parse(rawBody(forwarded))).to.deep.equal({ error: UPGRADE_REFUSED_MESSAGE });
          expect(forwarded).not.to.match(/\r\nx-platform-client-principal/i);
          // nginx passes on 401 and 403 only: a 401, which its challenge location asks again about (the 400 above).
          const nginx = await verify('nginx', path, options);
          expect(status(nginx), `${path} ${credentials}`).to.equal(401);
          expect(nginx).not.to.match(/\r\nx-platform-client-principal/i);
        }
      }
    });
  }

  for (const convention of ['nginx', 'forwarded'] as const) {
    it(`${convention}: a WebSocket handshake is judged like its GET: the identity for a session, 401 without one`, async () => {
      for (const connection of ['Connection: Upgrade\r\n', '']) {
        const allowed = await verify(convention, '/socket', {
          extra: `${connection}${WEBSOCKET_HANDSHAKE}Cookie: ${cookie}\r\n`,
        });
        expect(status(allowed), connection).to.equal(200);
        expect(allowed).to.match(/\r\nx-platform-client-principal-id: demo\r\n/i);
        const refused = await verify(convention, '/socket', { extra: `${connection}${WEBSOCKET_HANDSHAKE}` });
        expect(status(refused), connection).to.equal(401);
        expect(refused).not.to.match(/\r\nx-platform-client-principal/i);
      }
    });

    it(`${convention}: the original's host is one host: a list, even of the session's own host, is refused`, async () => {
      const signedIn = { extra: `Cookie: ${cookie}\r\n` };
      expect(status(await verify(convention, '/reports', signedIn))).to.equal(200);
      for (const listed of [`${host},evil.example`, `${host}, ${host}`, `evil.example, ${host}`]) {
        const answer = await verify(convention, '/reports', { ...signedIn, originalHost: listed });
        expect(status(answer), listed).to.equal(convention === 'nginx' ? 401 : 400);
        expect(answer).not.to.match(/\r\nx-platform-client-principal/i);
        if (convention === 'forwarded') expect(JSON.parse(rawBody(answer)).error).to.match(/Host header is not valid/);
      }
    });
  }

  it('both conventions saying the same are read as one request (answered as nginx is); saying different things, refused', async () => {
    const both = (uri: string) =>
      verify('nginx', '/reports', {
        extra: `X-Forwarded-Uri: ${uri}\r\nX-Forwarded-Method: GET\r\nCookie: ${cookie}\r\n`,
      });
    const agreeing = await both('/reports');
    expect(status(agreeing)).to.equal(200);
    expect(agreeing).to.match(/\r\nx-platform-client-principal-id: demo\r\n/i);
    const disagreeing = await both('/public/x');
    expect(status(disagreeing)).to.equal(400);
    expect(JSON.parse(rawBody(disagreeing)).error).to.match(/X-Original-URI and X-Forwarded-Uri disagree/);
  });
});
