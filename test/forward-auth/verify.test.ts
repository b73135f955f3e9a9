// The verify endpoint against a real OpenID provider, asked over HTTP as a web server asks it,
// and ForwardAuth itself for peers a loopback test cannot be.
import { expect } from 'chai';

import {
  ForwardAuth,
  OWN_ROUTE_MESSAGE,
  SPOOFED_MESSAGE,
  UNTRUSTED_PEER_MESSAGE,
} from '../../src/core/forward-auth/verify.js';
import { TrustedProxies } from '../../src/core/forward-auth/trusted-proxies.js';
import type { RequestView } from '../../src/core/http/request-view.js';
import { loadAddonCore } from '../../src/native/index.js';
import { VERIFIED_HEADER } from '../../src/webhook/app-headers.js';
import { Browser, type Response } from '../support/browser.js';
import { capturingLogger } from '../support/logs.js';
import { principal } from '../support/principal.js';
import { raw } from '../support/raw-http.js';
import { signIn, startDeployment, type Deployment } from '../support/sign-in.js';

describe('forward auth: the verify endpoint', function () {
  this.timeout(30_000);
  let deployment: Deployment;
  let host: string;
  let cookie: string;
  let idToken: string;
  const logs = capturingLogger();

  before(async () => {
    deployment = await startDeployment({ logger: logs.logger });
    host = new URL(deployment.url).host;
    const browser = new Browser();
    const { final } = await signIn(browser, deployment);
    const seen = JSON.parse(final.body) as { headers: Record<string, string> };
    idToken = seen.headers['x-platform-token-dev-id-token']!;
    cookie = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
  });
  after(() => deployment.close());

  /** Asks /.auth/verify about a request, under nginx's convention or the forwarded one (Traefik, Caddy). */
  function verify(
    convention: 'nginx' | 'forwarded',
    uri: string,
    headers: Record<string, string> = {},
    method = 'GET',
  ): Promise<Response> {
    const original =
      convention === 'nginx'
        ? { 'x-original-uri': uri, 'x-original-method': method }
        : { 'x-forwarded-uri': uri, 'x-forwarded-method': method };
    return new Browser().request(`${deployment.url}/.auth/verify`, {
      headers: { 'x-forwarded-host': host, 'x-forwarded-proto': 'http', ...original, ...headers },
    });
  }

  for (const convention of ['nginx', 'forwarded'] as const) {
    it(`${convention}: a signed-in request is allowed, 200 with the identity headers and no body`, async () => {
      const answer = await verify(convention, '/reports?q=1', { cookie });
      expect(answer.status).to.equal(200);
      expect(answer.body).to.equal('');
      expect(answer.headers).to.include({
        'x-platform-client-principal-id': 'demo',
        'x-platform-client-principal-name': 'Dev User',
        'x-platform-client-principal-idp': 'dev',
        'cache-control': 'no-store',
      });
      expect(principal(answer.headers).claims).to.deep.include({ typ: 'email', val: 'demo@example.com' });
      // The token store is on: the app may have the provider's tokens too.
      expect(answer.headers['x-platform-token-dev-id-token']).to.equal(idToken);
    });

    it(`${convention}: an excluded path is allowed anonymously: 200 without identity headers`, async () => {
      const answer = await verify(convention, '/public/logo.png');
      expect(answer.status).to.equal(200);
      expect(Object.keys(answer.headers).filter((name) => name.startsWith('x-platform-'))).to.deep.equal([]);
    });

    it(`${convention}: the provider's token as a bearer token is allowed with its identity`, async () => {
      const answer = await verify(convention, '/api/orders', {
        authorization: `Bearer ${idToken}`,
        accept: 'application/json',
      });
      expect(answer.status).to.equal(200);
      expect(answer.headers['x-platform-client-principal-id']).to.equal('demo');
    });

    it(`${convention}: an identity header, an override or a webhook claim of the client's own is refused (403), on excluded paths too`, async () => {
      const forged: ReadonlyArray<readonly [string, string]> = [
        ['X-PLATFORM-CLIENT-PRINCIPAL-ID', 'admin'],
        ['x_platform_client_principal_id', 'admin'],
        ['X-MS-CLIENT-PRINCIPAL-NAME', 'admin'],
        ['X-Platform-Token-Dev-Access-Token', 'forged'],
        ['X-Original-URL', '/admin'],
        ['X-HTTP-Method-Override', 'DELETE'],
        ['X_Forwarded_Host', 'evil.example'],
        [VERIFIED_HEADER, 'true'],
      ];
      for (const [name, value] of forged) {
        for (const uri of ['/reports', '/public/x']) {
          const answer = await verify(convention, uri, { cookie, [name]: value });
          expect(answer.status, `${name} on ${uri}`).to.equal(403);
          expect(JSON.parse(answer.body)).to.deep.equal({ error: SPOOFED_MESSAGE });
        }
      }
    });

    it(`${convention}: a forged header behind more than a thousand others is seen and refused (403): every header is read, none cut off`, async () => {
      // By default node keeps about the first thousand headers and drops the rest silently; a web server
      // in front (Caddy, Traefik) passes every one to the app, so what verify did not see would reach it.
      const original =
        convention === 'nginx'
          ? `X-Original-URI: /public/x\r\nX-Original-Method: GET\r\n`
          : `X-Forwarded-Uri: /public/x\r\nX-Forwarded-Method: GET\r\n`;
      const padding = 'X-Gpad: \r\n'.repeat(1100);
      const answer = await raw(
        deployment.url,
        `GET /.auth/verify HTTP/1.1\r\nHost: ${host}\r\nX-Forwarded-Host: ${host}\r\nX-Forwarded-Proto: http\r\n${original}${padding}X-MS-CLIENT-PRINCIPAL-ID: admin\r\nConnection: close\r\n\r\n`,
      );
      expect(answer).to.match(/^HTTP\/1\.1 403 /);
      expect(answer).to.contain(JSON.stringify({ error: SPOOFED_MESSAGE }));
    });

    it(`${convention}: a request for one of gatehouse's own routes is never judged (403): verify must not sign anyone out`, async () => {
      for (const uri of ['/.auth/logout', '/.auth/me', '/.auth', '/.auth/login/dev?post_login_redirect_uri=/']) {
        const answer = await verify(convention, uri, { cookie });
        expect(answer.status, uri).to.equal(403);
        expect(JSON.parse(answer.body)).to.deep.equal({ error: OWN_ROUTE_MESSAGE });
      }
      // Still signed in.
      expect((await verify(convention, '/reports', { cookie })).status).to.equal(200);
    });
  }

  it('forwarded: sign-in needed is what the sidecar answers: a browser is sent to sign in and back to the original URL', async () => {
    const answer = await verify('forwarded', '/reports/q1?format=pdf&x=1');
    expect(answer.status).to.equal(302);
    expect(answer.headers.location).to.equal(
      `/.auth/login/dev?post_login_redirect_uri=${encodeURIComponent('/reports/q1?format=pdf&x=1')}`,
    );
  });

  it('forwarded: an API caller gets 401 with a JSON error, a form POST a 401 page', async () => {
    const api = await verify('forwarded', '/api/orders', { accept: 'application/json' });
    expect(api.status).to.equal(401);
    expect(api.headers['www-authenticate']).to.equal('Bearer');
    expect(JSON.parse(api.body)).to.have.property('error');
    const post = await verify('forwarded', '/orders', {}, 'POST');
    expect(post.status).to.equal(401);
    expect(post.headers['content-type']).to.match(/^text\/html/);
  });

  it('forwarded: a path starting with // never becomes a return URL to another host', async () => {
    const answer = await verify('forwarded', '//evil.example/x');
    expect(answer.status).to.equal(302);
    expect(answer.headers.location).to.equal('/.auth/login/dev?post_login_redirect_uri=%2F');
  });

  it('nginx: sign-in needed is a 401 (nginx passes on 2xx, 401 and 403 only), for browsers and API callers alike', async () => {
    const browser = await verify('nginx', '/reports');
    expect(browser.status).to.equal(401);
    expect(browser.body).to.equal('');
    const api = await verify('nginx', '/api/orders', { accept: 'application/json' });
    expect(api.status).to.equal(401);
    expect(api.headers['www-authenticate']).to.equal('Bearer');
  });

  it('a cookie that does not verify is a sign-in, never an identity', async () => {
    const answer = await verify('forwarded', '/reports', { cookie: `${cookie.slice(0, -2)}xx` });
    expect(answer.status).to.equal(302);
    expect(answer.setCookies.some((line) => line.startsWith('PlatformAuthSession=;'))).to.equal(true);
  });

  it('the session is bound to its host: the same cookie for another host is not signed in', async () => {
    const answer = await verify('forwarded', '/reports', { cookie, 'x-forwarded-host': 'other.example' });
    expect(answer.status).to.equal(302);
  });

  it('without the original request: 400 naming the headers to send', async () => {
    const answer = await new Browser().request(`${deployment.url}/.auth/verify`, { headers: { cookie } });
    expect(answer.status).to.equal(400);
    expect(JSON.parse(answer.body).error).to.match(
      /^Bad verify request: The verify endpoint judges the request a web server forwards: send X-Original-URI and X-Original-Method \(nginx\)/,
    );
  });

  it('a hostile original is a 400, judged by nothing', async () => {
    const answer = await verify('nginx', 'http://evil.example/reports', { cookie });
    expect(answer.status).to.equal(400);
    expect(JSON.parse(answer.body).error).to.match(/X-Original-URI is not a path/);
  });

  it('GET and HEAD only', async () => {
    const answer = await new Browser().request(`${deployment.url}/.auth/verify`, {
      method: 'POST',
      headers: {
        'x-forwarded-uri': '/',
        'x-forwarded-method': 'GET',
        'x-forwarded-host': host,
        'x-forwarded-proto': 'http',
        cookie,
      },
    });
    expect(answer.status).to.equal(405);
    expect(answer.headers.allow).to.equal('GET, HEAD');
  });

  it('logout ends what verify allows: the copied cookie is refused after it', async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    const own = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
    expect((await verify('forwarded', '/reports', { cookie: own })).status).to.equal(200);
    await browser.follow(`${deployment.url}/.auth/logout`);
    expect((await verify('forwarded', '/reports', { cookie: own })).status).to.equal(302);
    expect((await verify('nginx', '/reports', { cookie: own })).status).to.equal(401);
  });

  it('no cookie, token or identity value ever reaches the log', () => {
    const raw = logs.raw();
    expect(raw).to.contain('verify'); // the log was written to
    for (const secret of [cookie.split('=')[1]!, idToken, 'demo@example.com']) expect(raw).not.to.contain(secret);
  });

  describe('who may ask', () => {
    function view(remoteAddress: string, headers: Array<[string, string]>): RequestView {
      return {
        method: 'GET',
        path: '/.auth/verify',
        query: '',
        headers,
        scheme: 'http',
        host: host,
        remoteAddress,
        readBody: () => Promise.reject(new Error('no body')),
      };
    }

    it("an untrusted peer gets 403, and its headers are never read: not even a real session's cookie is judged", async () => {
      const forwardAuth = new ForwardAuth({
        layer: deployment.gateway.layer,
        trustedProxies: TrustedProxies.parse('10.0.0.0/8'),
        headers: loadAddonCore(),
      });
      const spoofed: Array<[string, string]> = [
        ['X-Forwarded-Uri', '/public/x'],
        ['X-Forwarded-Method', 'GET'],
        ['X-Forwarded-Host', host],
        ['X-Forwarded-Proto', 'https'],
        ['Cookie', cookie],
      ];
      for (const address of ['127.0.0.1', '203.0.113.9', '::1']) {
        let answer: Awaited<ReturnType<ForwardAuth['answer']>> | undefined;
        const lines = await logs.during(async () => (answer = await forwardAuth.answer(view(address, spoofed))));
        // Refused before anything was judged: the one line says so, and names the peer.
        expect(lines.map(({ reason, remoteAddress }) => ({ reason, remoteAddress }))).to.deep.equal([
          { reason: 'verify from an untrusted peer', remoteAddress: address },
        ]);
        answer = answer!;
        expect(answer.status, address).to.equal(403);
        expect(JSON.parse(answer.body!.toString())).to.deep.equal({ error: UNTRUSTED_PEER_MESSAGE });
        expect(answer.headers).not.to.have.property('X-PLATFORM-CLIENT-PRINCIPAL-ID');
      }
      // The same question from a trusted one is answered.
      const trusted = await forwardAuth.answer(view('10.1.1.1', spoofed));
      expect(trusted.status).to.equal(200);
    });

    it('the endpoint is found at the configured prefix only, its path matched exactly', async () => {
      const forwardAuth = new ForwardAuth({
        layer: deployment.gateway.layer,
        trustedProxies: TrustedProxies.parse(),
        headers: loadAddonCore(),
      });
      expect(forwardAuth.path).to.equal('/.auth/verify');
      // A signed-in question, with a session signed in here: the endpoint answers it with the
      // identity headers; any other path is routed elsewhere (gatehouse's routes, or the app),
      // whose answers carry none.
      const browser = new Browser();
      await signIn(browser, deployment);
      const cookie = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
      const ask = (path: string): Promise<Response> =>
        new Browser().request(`${deployment.url}${path}`, {
          headers: {
            'x-forwarded-host': host,
            'x-forwarded-proto': 'http',
            'x-original-uri': '/reports',
            'x-original-method': 'GET',
            cookie,
          },
        });
      expect((await ask('/.auth/verify')).headers['x-platform-client-principal-id']).to.equal('demo');
      for (const path of ['/.auth/verify/', '/.auth/verifyx', '/.AUTH/verify', '/x/.auth/verify', '/.auth/Verify'])
        expect((await ask(path)).headers['x-platform-client-principal-id'], path).to.equal(undefined);
    });
  });
});
