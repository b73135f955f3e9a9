// The signed identity assertion behind nginx and Caddy as the shipped examples configure them: the
// web server copies it from gatehouse's /.auth/verify answer onto the app's request, and the app
// checks it with jose against the keys the web server proxies from gatehouse (/.auth/keys on the
// app's own origin). A client's own copy never reaches the app.
import { expect } from 'chai';
import { createRemoteJWKSet, jwtVerify, UnsecuredJWT } from 'jose';

import {
  startBehind,
  webServerMissing,
  type BehindOptions,
  type BehindWebServer,
  type WebServer,
} from '../forward-auth/behind-web-server.js';
import { Browser } from '../support/browser.js';
import { defaultDocument } from '../support/sign-in.js';

const HEADER = 'x-platform-client-principal-assertion';

function echoed(text: string): { headers: Record<string, string | undefined> } {
  return JSON.parse(text) as { headers: Record<string, string | undefined> };
}

/** Signs in as demo through the web server; the session cookie as a header. */
async function signedInCookie(deployment: BehindWebServer): Promise<string> {
  const browser = new Browser();
  const hops = await browser.follow(`${deployment.url}/orders`);
  const loginPage = hops.at(-1)!;
  expect(loginPage.url.startsWith(deployment.idp.issuer), loginPage.url).to.equal(true);
  const after = await browser.submitForm(loginPage, /\/login$/, { username: 'demo', password: 'demo' });
  expect(after.at(-1)!.status).to.equal(200);
  return `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
}

/** Each shipped example: nginx's plain and caching configurations, Caddy's. */
const EXAMPLES: ReadonlyArray<{ which: WebServer; name: string; options: BehindOptions; gatehouse: object }> = [
  { which: 'nginx', name: 'nginx/gatehouse.conf', options: {}, gatehouse: {} },
  {
    which: 'nginx',
    name: 'nginx/gatehouse-cached.conf',
    options: { nginxExample: 'gatehouse-cached.conf' },
    gatehouse: { verifyCache: {} },
  },
  { which: 'caddy', name: 'caddy/Caddyfile', options: {}, gatehouse: {} },
];

for (const { which, name, options, gatehouse } of EXAMPLES) {
  describe(`identity assertion behind ${which} (examples/${name})`, function () {
    this.timeout(60_000);
    let deployment: BehindWebServer;
    let origin: string;
    let cookie: string;

    before(async function () {
      if (webServerMissing(which) !== undefined) throw new Error(webServerMissing(which));
      deployment = await startBehind(which, {
        ...options,
        document: (issuer) => ({ ...defaultDocument(issuer), gatehouse: { ...gatehouse, identityAssertion: {} } }),
      });
      origin = new URL(deployment.url).origin;
      cookie = await signedInCookie(deployment);
    });
    after(() => deployment?.close());

    async function appReceives(path: string, headers: Record<string, string>) {
      const answer = await new Browser().request(`${deployment.url}${path}`, { headers });
      expect(answer.status, answer.body).to.equal(200);
      return echoed(answer.body).headers[HEADER];
    }

    it('the app verifies the assertion the web server copied, against the keys on its own origin', async () => {
      const assertion = await appReceives('/orders', { cookie });
      expect(assertion).to.be.a('string');
      const keys = createRemoteJWKSet(new URL(`${origin}/.auth/keys`));
      const { payload } = await jwtVerify(assertion!, keys, {
        issuer: origin,
        audience: origin,
        algorithms: ['ES256'],
      });
      expect(payload).to.include({ sub: 'demo', idp: 'dev', name: 'Dev User' });
    });

    it("a client's own assertion never reaches the app: refused, or replaced by gatehouse's", async () => {
      const forged = new UnsecuredJWT({ sub: 'admin' }).setIssuer(origin).setAudience(origin).encode();
      const genuine = await appReceives('/orders', { cookie });
      expect(genuine).to.be.a('string');
      for (const [path, headers] of [
        ['/orders', { cookie }],
        ['/public/page', {}],
      ] as const) {
        const answer = await new Browser().request(`${deployment.url}${path}`, {
          headers: { ...headers, 'X-Platform-Client-Principal-Assertion': forged },
        });
        // nginx passes it to gatehouse, which refuses the request; Caddy's configuration deletes it first.
        if (which === 'nginx') expect(answer.status, path).to.equal(403);
        else expect(echoed(answer.body).headers[HEADER], path).to.equal(path === '/orders' ? genuine : undefined);
      }
      for (const request of deployment.seen) expect(JSON.stringify(request.headers)).not.to.contain(forged);
    });
  });

  describe(`identity assertion off, behind ${which} (examples/${name})`, function () {
    this.timeout(60_000);
    let deployment: BehindWebServer;
    before(async () => {
      deployment = await startBehind(which, {
        ...options,
        document: (issuer) => ({ ...defaultDocument(issuer), gatehouse }),
      });
    });
    after(() => deployment?.close());

    it('the app gets no assertion header at all (not an empty one, nor a placeholder)', async () => {
      const cookie = await signedInCookie(deployment);
      const answer = await new Browser().request(`${deployment.url}/orders`, { headers: { cookie } });
      const { headers } = echoed(answer.body);
      expect(headers['x-platform-client-principal-id']).to.equal('demo');
      expect(headers).not.to.have.property(HEADER);
    });
  });
}
