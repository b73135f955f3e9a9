// The signed identity assertion as an app sees it: an app behind gatehouse that checks the header
// with jose against the keys gatehouse publishes (createRemoteJWKSet on /.auth/keys, jwtVerify
// pinning issuer, audience and algorithm), reached through the sidecar, asked about through
// /.auth/verify, and through the native host that plays the IIS module. It accepts what gatehouse
// signed and refuses what it did not: tampered, expired, for another audience, unsigned.
import http from 'node:http';

import { expect } from 'chai';
import { createRemoteJWKSet, decodeJwt, jwtVerify, UnsecuredJWT, type JWTPayload } from 'jose';

import { PUBLISH_LEAD_MS, RING_REREAD_MS } from '../../src/core/assertion/key-ring.js';
import { inServerBodyPrefix } from '../../src/inserver/host.js';
import { inServerPolicy, type NativeRequest } from '../../src/inserver/policy.js';
import { createInterceptor, type NativeInterceptor } from '../../src/native/interceptor.js';
import { loadModuleHost } from '../../src/native/module-host.js';
import { Browser } from '../support/browser.js';
import { defaultDocument, signIn, startDeployment, type Deployment } from '../support/sign-in.js';

const HEADER = 'x-platform-client-principal-assertion';

/** What the app answers: the claims it verified, or why it refused. */
type Checked = { readonly ok: true; readonly claims: JWTPayload } | { readonly ok: false; readonly error: string };

describe('identity assertion: an app verifying it through every host', function () {
  this.timeout(60_000);
  let deployment: Deployment;
  let origin: string;
  let cookie: string;
  /** The app's check, as the docs show it: the published keys, and issuer, audience, algorithm pinned. */
  let check: (jwt: string | undefined, at?: Date, audience?: string) => Promise<Checked>;
  /** The assertion each request reaching the app carried. */
  const received: Array<string | undefined> = [];

  const verifyingApp: http.RequestListener = (req, res) => {
    const assertion = req.headers[HEADER] as string | undefined;
    received.push(assertion);
    void check(assertion).then((checked) =>
      res.writeHead(checked.ok ? 200 : 401, { 'content-type': 'application/json' }).end(JSON.stringify(checked)),
    );
  };

  before(async () => {
    deployment = await startDeployment({
      document: (issuer) => ({ ...defaultDocument(issuer), gatehouse: { identityAssertion: {} } }),
      upstreamHandler: verifyingApp,
    });
    origin = new URL(deployment.url).origin;
    const keys = createRemoteJWKSet(new URL(`${origin}/.auth/keys`));
    check = async (jwt, at, audience = origin) => {
      if (jwt === undefined) return { ok: false, error: 'no assertion' };
      try {
        const { payload } = await jwtVerify(jwt, keys, {
          issuer: origin,
          audience,
          algorithms: ['ES256'],
          ...(at ? { currentDate: at } : {}),
        });
        return { ok: true, claims: payload };
      } catch (error) {
        return { ok: false, error: (error as { code?: string }).code ?? String(error) };
      }
    };
    const browser = new Browser();
    const { final } = await signIn(browser, deployment);
    expect(final.status, final.body).to.equal(200);
    cookie = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
  });
  after(() => deployment.close());

  function get(path: string, headers: Record<string, string> = {}) {
    return new Browser().request(`${deployment.url}${path}`, { headers });
  }

  it('the sidecar: the app verifies who the caller is', async () => {
    const answer = await get('/orders', { cookie });
    expect(answer.status, answer.body).to.equal(200);
    const { claims } = JSON.parse(answer.body) as { claims: JWTPayload };
    expect(claims).to.include({ iss: origin, aud: origin, sub: 'demo', idp: 'dev', name: 'Dev User' });
    expect(claims.exp! - claims.iat!).to.equal(300);
  });

  it('the assertion never carries a token of the session', async () => {
    const me = await get('/.auth/me', { cookie, accept: 'application/json' });
    const [entry] = JSON.parse(me.body) as Array<Record<string, unknown>>;
    const tokens = ['access_token', 'id_token', 'refresh_token'].map((name) => entry![name]);
    expect(tokens.filter((token) => typeof token === 'string' && token.length > 0)).to.have.length.at.least(2);
    await get('/orders', { cookie });
    const assertion = received.at(-1)!;
    const text = JSON.stringify(decodeJwt(assertion));
    for (const token of tokens) if (typeof token === 'string') expect(assertion).not.to.include(token);
    for (const token of tokens) if (typeof token === 'string') expect(text).not.to.include(token);
    expect(Object.keys(decodeJwt(assertion))).to.have.members([
      'roles',
      'iss',
      'aud',
      'sub',
      'iat',
      'exp',
      'idp',
      'name',
      'email',
    ]);
  });

  it('is signed once and reused by the next requests of the session', async () => {
    await get('/a', { cookie });
    await get('/b', { cookie });
    expect(received.at(-1)).to.be.a('string').and.equal(received.at(-2));
  });

  it('a client cannot bring its own: stripped from a signed-in request and from an anonymous one', async () => {
    const forged = new UnsecuredJWT({ sub: 'admin', idp: 'dev' }).setIssuer(origin).setAudience(origin).encode();
    const signedIn = await get('/orders', { cookie, 'X-Platform-Client-Principal-Assertion': forged });
    expect(signedIn.status).to.equal(200);
    expect(received.at(-1)).not.to.equal(forged);
    const anonymous = await get('/public/page', { x_platform_client_principal_assertion: forged });
    expect(anonymous.status).to.equal(401);
    expect(JSON.parse(anonymous.body)).to.deep.equal({ ok: false, error: 'no assertion' });
    expect(received.at(-1)).to.equal(undefined);
  });

  it('/.auth/verify answers with it, for the web server to copy', async () => {
    const host = new URL(deployment.url).host;
    const answer = await new Browser().request(`${deployment.url}/.auth/verify`, {
      headers: {
        'x-forwarded-host': host,
        'x-forwarded-proto': 'http',
        'x-original-uri': '/orders',
        'x-original-method': 'GET',
        cookie,
      },
    });
    expect(answer.status).to.equal(200);
    const checked = await check(answer.headers[HEADER] as string);
    expect(checked.ok && checked.claims.sub).to.equal('demo');
  });

  it('/.auth/verify refuses a request that carries one of its own (no web server strips it)', async () => {
    const host = new URL(deployment.url).host;
    const answer = await new Browser().request(`${deployment.url}/.auth/verify`, {
      headers: {
        'x-forwarded-host': host,
        'x-forwarded-proto': 'http',
        'x-original-uri': '/orders',
        'x-original-method': 'GET',
        cookie,
        [HEADER]: received.at(-1) ?? 'x',
      },
    });
    expect(answer.status).to.equal(403);
  });

  it('the module host: the same assertion, which the app verifies', async () => {
    const host = loadModuleHost();
    const interceptor: NativeInterceptor = createInterceptor(inServerPolicy(deployment.gateway.layer));
    interceptor.attachHost(host.link, inServerBodyPrefix(deployment.gateway.layer.config));
    try {
      const request: NativeRequest = {
        method: 'GET',
        scheme: 'http',
        host: new URL(deployment.url).host,
        path: '/orders',
        query: '',
        remoteAddress: '127.0.0.1',
        headers: [
          ['Host', new URL(deployment.url).host],
          ['Cookie', cookie],
          ['X-PLATFORM-CLIENT-PRINCIPAL-ASSERTION', 'forged'],
        ],
      };
      const [result] = await host.replay([request], 1);
      expect(result!.kind).to.equal('continue');
      expect(result!.remove!.map((name) => name.toLowerCase())).to.include(HEADER);
      const set = result!.set!.filter(([name]) => name.toLowerCase() === HEADER);
      expect(set).to.have.length(1);
      const checked = await check(set[0]![1]);
      expect(checked.ok && checked.claims.sub).to.equal('demo');
      await get('/orders', { cookie });
      expect(set[0]![1]).to.equal(received.at(-1), 'the sidecar and the module send the same header');
    } finally {
      interceptor.close();
    }
  });

  describe('what the app refuses', () => {
    let genuine: string;
    before(async () => {
      await get('/orders', { cookie });
      genuine = received.at(-1)!;
      expect((await check(genuine)).ok).to.equal(true);
    });

    it('a tampered assertion', async () => {
      const [header, payload, signature] = genuine.split('.');
      const claims = { ...decodeJwt(genuine), sub: 'admin' };
      const forged = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
      expect(payload).not.to.equal(forged.split('.')[1]);
      expect(await check(forged)).to.deep.equal({ ok: false, error: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
    });

    it('an expired assertion', async () => {
      const exp = decodeJwt(genuine).exp!;
      expect(await check(genuine, new Date((exp + 1) * 1000))).to.deep.equal({
        ok: false,
        error: 'ERR_JWT_EXPIRED',
      });
    });

    it('an assertion replayed to another app (another audience)', async () => {
      // Another app behind the same gatehouse keys pins its own audience (gatehouse.identityAssertion.audience).
      const refused = await check(genuine, undefined, 'urn:example:another-app');
      expect(refused).to.deep.equal({ ok: false, error: 'ERR_JWT_CLAIM_VALIDATION_FAILED' });
    });

    it('an unsigned assertion (alg none)', async () => {
      const unsigned = new UnsecuredJWT({ ...decodeJwt(genuine) }).encode();
      expect((await check(unsigned)).ok).to.equal(false);
      // The same through the sidecar: gatehouse strips it, and puts its own in its place.
      const answer = await get('/orders', { cookie, [HEADER]: unsigned });
      expect(answer.status).to.equal(200);
      expect(received.at(-1)).to.equal(genuine);
    });
  });

  it('/.auth/keys: the public keys, cacheable for less than a new key waits before it signs', async () => {
    const answer = await get('/.auth/keys');
    expect(answer.status).to.equal(200);
    expect(answer.headers['content-type']).to.match(/^application\/json/);
    const maxAge = Number(/max-age=(\d+)/.exec(String(answer.headers['cache-control']))?.[1]);
    // An app's copy must run out before a key published meanwhile (by any instance) starts signing.
    expect(maxAge)
      .to.be.greaterThan(0)
      .and.lessThan((PUBLISH_LEAD_MS - RING_REREAD_MS) / 1000);
    const { keys } = JSON.parse(answer.body) as { keys: Array<Record<string, unknown>> };
    expect(keys).to.have.length(1);
    expect(keys[0]).to.include({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(keys[0]).not.to.have.property('d');
    const head = await new Browser().request(`${deployment.url}/.auth/keys`, { method: 'HEAD' });
    expect(head.status).to.equal(200);
    const post = await new Browser().request(`${deployment.url}/.auth/keys`, { method: 'POST' });
    expect(post.status).to.equal(405);
  });
});

describe('identity assertion off (the default)', function () {
  this.timeout(60_000);
  let deployment: Deployment;
  before(async () => {
    deployment = await startDeployment();
  });
  after(() => deployment.close());

  it('no header reaches the app, and /.auth/keys is a 404', async () => {
    const browser = new Browser();
    const { final } = await signIn(browser, deployment);
    const seen = JSON.parse(final.body) as { headers: Record<string, string> };
    expect(seen.headers['x-platform-client-principal-id']).to.equal('demo');
    expect(seen.headers).not.to.have.property(HEADER);
    const keys = await new Browser().request(`${deployment.url}/.auth/keys`, {
      headers: { accept: 'application/json' },
    });
    expect(keys.status).to.equal(404);
  });
});
