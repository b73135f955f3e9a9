// Authorization: Bearer on protected paths: every check, and every forgery
// the issue lists, against issuers whose keys the test holds.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';

import { expect } from 'chai';
import { exportJWK, SignJWT } from 'jose';

import { generateRsaKeyPair } from '../../../src/dev/rsa-key-pair.js';
import { Browser, type Response } from '../../support/browser.js';
import { forwarded } from '../../support/principal.js';
import { startGatewayDeployment, type GatewayDeployment } from '../../support/sign-in.js';
import { startTokenIssuer, type TokenIssuer } from '../../stand-ins/token-issuer.js';

function bearerDocument(corp: TokenIssuer, partner: TokenIssuer): Record<string, unknown> {
  const provider = (issuer: TokenIssuer, path: string, clientId: string, audiences?: string[]) => ({
    registration: {
      clientId,
      openIdConnectConfiguration: {
        wellKnownOpenIdConfiguration: `${issuer.issuer(path)}/.well-known/openid-configuration`,
      },
    },
    ...(audiences ? { validation: { allowedAudiences: audiences } } : {}),
  });
  return {
    identityProviders: {
      customOpenIdConnectProviders: {
        corp: provider(corp, '/corp', 'corp-app', ['api://corp']),
        partner: provider(partner, '/partner', 'partner-app'),
      },
    },
    globalValidation: { redirectToProvider: 'corp', excludedPaths: ['/public/*'] },
  };
}

function expectInvalidToken(response: Response): void {
  expect(response.status, response.body).to.equal(401);
  expect(response.headers['www-authenticate']).to.match(/^Bearer error="invalid_token"/);
  expect(JSON.parse(response.body)).to.include({ error: 'invalid_token' });
}

describe('bearer tokens (client-directed)', () => {
  let corp: TokenIssuer;
  let partner: TokenIssuer;
  let deployment: GatewayDeployment;
  const get = (token: string, path = '/api/orders') =>
    new Browser().request(`${deployment.url}${path}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    });
  const corpClaims = () => ({
    iss: corp.issuer('/corp'),
    aud: 'api://corp',
    sub: 'user-7',
    name: 'Seven',
    preferred_username: 'seven@corp',
  });

  beforeEach(async () => {
    corp = await startTokenIssuer();
    partner = await startTokenIssuer();
    deployment = await startGatewayDeployment({
      prepare: async () => ({ document: bearerDocument(corp, partner), env: {} }),
    });
  });
  afterEach(async () => {
    await deployment.close();
    await Promise.all([corp.close(), partner.close()]);
  });

  it('a valid token is forwarded with the normalized identity headers; -IDP is the provider alias', async () => {
    const token = await corp.mint(corpClaims());
    const answer = await get(token);
    expect(answer.status).to.equal(200);
    const { headers } = forwarded(answer.body);
    expect(headers).to.include({
      'x-platform-client-principal-id': 'user-7',
      'x-platform-client-principal-name': 'seven@corp',
      'x-platform-client-principal-idp': 'corp',
    });
    expect(headers.authorization).to.equal(`Bearer ${token}`);
  });

  it("without allowedAudiences the audience is the provider's client id; each provider's token is its own", async () => {
    const answer = await get(await partner.mint({ iss: partner.issuer('/partner'), aud: 'partner-app', sub: 'p-1' }));
    expect(answer.status).to.equal(200);
    expect(forwarded(answer.body).headers['x-platform-client-principal-idp']).to.equal('partner');
    expectInvalidToken(
      await get(await partner.mint({ iss: partner.issuer('/partner'), aud: 'api://corp', sub: 'p-1' })),
    );
  });

  it('refuses alg "none"', async () => {
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    expectInvalidToken(
      await get(
        `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ ...corpClaims(), exp: Math.floor(Date.now() / 1000) + 600 })}.`,
      ),
    );
  });

  it("refuses HS256 signed with the provider's public key as the secret", async () => {
    const publicPem = corp.keys[0]!.publicKey.export({ type: 'spki', format: 'pem' });
    const token = await new SignJWT({ ...corpClaims() })
      .setProtectedHeader({ alg: 'HS256', kid: corp.keys[0]!.kid })
      .setExpirationTime('10m')
      .sign(Buffer.from(publicPem));
    expectInvalidToken(await get(token));
  });

  it('an unknown kid is refused after one key refresh; a burst of made-up kids costs one refresh per cool-down', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await get(await corp.mint(corpClaims())); // keys loaded
    const before = corp.jwksFetches;
    for (let i = 0; i < 5; i++)
      expectInvalidToken(await get(await corp.mint(corpClaims(), { key: privateKey, kid: `made-up-${i}` })));
    expect(corp.jwksFetches - before).to.equal(1);
  });

  it('a rotated key is picked up on first sight of its kid', async () => {
    await get(await corp.mint(corpClaims()));
    corp.rotate();
    const answer = await get(await corp.mint(corpClaims()));
    expect(answer.status).to.equal(200);
  });

  it('requests that bring a rotated key while its fetch is under way wait for that fetch: none is refused, one fetch in all', async () => {
    await get(await corp.mint(corpClaims())); // keys loaded
    corp.rotate();
    const before = corp.jwksFetches;
    const tokens = await Promise.all(
      Array.from({ length: 8 }, (_, i) => corp.mint({ ...corpClaims(), sub: `user-${i}` })),
    );
    const answers = await Promise.all(tokens.map((token) => get(token)));
    expect(answers.map((answer) => answer.status)).to.deep.equal(tokens.map(() => 200));
    expect(corp.jwksFetches - before).to.equal(1);
  });

  it('ignores jku, x5u and embedded jwk headers: only the provider keys count', async () => {
    const { privateKey, publicKey } = generateRsaKeyPair(); // exported as JWK below
    const jwk = await exportJWK(publicKey);
    for (const header of [{ jwk }, { jku: `${corp.url}/evil-keys` }, { x5u: `${corp.url}/evil.pem` }]) {
      expectInvalidToken(await get(await corp.mint(corpClaims(), { key: privateKey, kid: null, header })));
      expectInvalidToken(await get(await corp.mint(corpClaims(), { key: privateKey, header })));
    }
    expect(createPublicKey(privateKey).equals(publicKey)).to.equal(true);
  });

  it('refuses a wrong issuer, a wrong audience, an expired token and one not yet valid', async () => {
    const now = Math.floor(Date.now() / 1000);
    expectInvalidToken(await get(await corp.mint({ ...corpClaims(), iss: corp.issuer('/other') })));
    expectInvalidToken(await get(await corp.mint({ ...corpClaims(), aud: 'api://someone-else' })));
    expectInvalidToken(await get(await corp.mint({ ...corpClaims(), iat: now - 7200, exp: now - 3600 })));
    expectInvalidToken(await get(await corp.mint({ ...corpClaims(), nbf: now + 3600 })));
    expectInvalidToken(await get(await corp.mint({ ...corpClaims(), exp: undefined })));
  });

  it('refuses a tampered payload', async () => {
    const [header, payload, signature] = (await corp.mint(corpClaims())).split('.') as [string, string, string];
    const changed = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'admin' }),
    ).toString('base64url');
    expectInvalidToken(await get(`${header}.${changed}.${signature}`));
  });

  it('refuses a validly signed token whose identity holds a control character no header can carry (a 401, not a failing request)', async () => {
    for (const claims of [
      { sub: 'user\r\nX-Platform-Client-Principal-Id: admin' },
      { preferred_username: 'seven\u0001' },
      { preferred_username: 'seven\u007f' },
    ]) {
      const answer = await get(await corp.mint({ ...corpClaims(), ...claims }));
      expectInvalidToken(answer);
      expect(JSON.parse(answer.body).error_description, JSON.stringify(claims)).to.match(/control character/);
    }
    // A tab is a header's own character, and non-ASCII travels as UTF-8: both pass. So does any claim that is
    // not a header of its own (-NAME is preferred_username here): the principal carries it, base64-encoded.
    expect((await get(await corp.mint({ ...corpClaims(), preferred_username: 'sev\ten Ä' }))).status).to.equal(200);
    expect((await get(await corp.mint({ ...corpClaims(), name: 'Seven\r\n\u0001' }))).status).to.equal(200);
  });

  it('refuses a validly signed token that names no user: sub missing, empty, blank, a number, an object, an array, null', async () => {
    const forwardedBefore = deployment.upstream.requests.length;
    for (const sub of [undefined, '', '  ', 42, { id: 'admin' }, ['admin'], null]) {
      const { sub: _dropped, ...rest } = corpClaims();
      const answer = await get(
        await corp.mint((sub === undefined ? rest : { ...rest, sub }) as Record<string, unknown>),
      );
      expectInvalidToken(answer);
      expect(JSON.parse(answer.body).error_description, JSON.stringify(sub)).to.match(/names no user/);
    }
    expect(deployment.upstream.requests.length, 'none of them reached the app').to.equal(forwardedBefore);
    expect((await get(await corp.mint(corpClaims()))).status).to.equal(200);
  });

  it("refuses a token signed by another configured provider's key but claiming this provider's issuer", async () => {
    expectInvalidToken(await get(await partner.mint(corpClaims())));
  });

  it('refuses malformed tokens: bad base64, not three parts, empty, too large', async () => {
    const good = await corp.mint(corpClaims());
    for (const token of [
      'abc.###.def',
      'only-one-part',
      'a.b',
      `${'x'.repeat(13 * 1024)}.e30.sig`,
      `${good} extra`,
      `${good.slice(0, 40)} ${good.slice(40)}`,
    ])
      expectInvalidToken(await get(token));
    const empty = await new Browser().request(`${deployment.url}/api`, {
      headers: { authorization: 'Bearer ', accept: 'application/json' },
    });
    expectInvalidToken(empty);
  });

  it('a 100 KB token never reaches the core: the server refuses the headers (431, or a reset while the client still writes)', async () => {
    const outcome = await get(`${'a'.repeat(100 * 1024)}.e30.sig`).then(
      (answer) => answer.status,
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect([431, 'ECONNRESET', 'EPIPE']).to.include(outcome);
    expect(deployment.upstream.requests).to.have.length(0);
  });

  it('invalid tokens never reach the app, even with a valid session cookie beside them', async () => {
    const answer = await new Browser().request(`${deployment.url}/api`, {
      headers: {
        authorization: 'Bearer abc.def.ghi',
        cookie: 'PlatformAuthSession=whatever',
        accept: 'application/json',
      },
    });
    expectInvalidToken(answer);
    expect(deployment.upstream.requests).to.have.length(0);
  });

  it('on an excluded path a bad token stays anonymous and a good one identifies the caller', async () => {
    const bad = await get('abc.def.ghi', '/public/x');
    expect(bad.status).to.equal(200);
    expect(forwarded(bad.body).headers).to.not.have.property('x-platform-client-principal-id');
    const good = await get(await corp.mint(corpClaims()), '/public/x');
    expect(forwarded(good.body).headers['x-platform-client-principal-id']).to.equal('user-7');
  });

  it("other schemes are not bearer tokens: Basic credentials are the app's business", async () => {
    const answer = await new Browser().request(`${deployment.url}/api`, {
      headers: { authorization: 'Basic dXNlcjpwYXNz', accept: 'application/json' },
    });
    expect(answer.status).to.equal(401);
    expect(answer.headers['www-authenticate']).to.equal('Bearer');
  });

  it('keys that cannot be fetched: 503 with Retry-After, never a pass', async () => {
    const token = await partner.mint({ iss: partner.issuer('/partner'), aud: 'partner-app', sub: 'p-1' });
    await partner.close();
    const answer = await get(token);
    expect(answer.status).to.equal(503);
    expect(answer.headers['retry-after']).to.equal('5');
  });
});
