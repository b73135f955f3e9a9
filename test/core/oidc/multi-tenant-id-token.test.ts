// A multi-tenant directory's ID tokens, which gatehouse checks itself
// (id-token-aside.ts), attacked at each of the client's token requests: code
// redemption, refresh and a client's own code. The directory is a real
// oidc-provider publishing the tenant template; its token endpoint answers the
// token set each test makes, signed by the key its JWKS publishes, so that
// every refusal is of the one claim or header the test got wrong.
import { createPublicKey, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import { expect } from 'chai';
import { base64url, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

import { resolveAuthConfig } from '../../../src/core/config/auth-config.js';
import type { OidcProviderConfig } from '../../../src/core/config/provider-settings.js';
import { OidcProviderClient, ProviderRefusedError } from '../../../src/core/oidc/provider-client.js';
import type { RunningIdentityProvider } from '../../../src/dev/identity-provider.js';
import { DIRECTORY_CLIENT_ID, startDirectory, TENANT, type Directory } from '../../support/directory-provider.js';

const OTHER_TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';
const CLIENT = DIRECTORY_CLIENT_ID;
const NONCE = 'n-0123456789';
const STATE = 's-0123456789';
const APP = 'https://app.example';
const REDIRECT = `${APP}/.auth/login/aad/callback`;
const ACCESS_TOKEN = `at-${randomBytes(12).toString('hex')}`;

type Signing = 'published' | 'unpublished' | 'none' | 'hs256-public-key';

describe('a multi-tenant directory: its ID tokens checked by gatehouse (a real oidc-provider)', function () {
  this.timeout(30_000);
  let aad: Directory;
  let idp: RunningIdentityProvider;
  let published: CryptoKey;
  let unpublished: CryptoKey;
  let publicJwk: JWK;
  /** The token endpoint's next answer. */
  let answer: Record<string, unknown>;
  const grantTypes: string[] = [];

  before(async () => {
    const keys = await generateKeyPair('RS256', { extractable: true });
    published = keys.privateKey;
    publicJwk = { ...(await exportJWK(keys.publicKey)), kid: 'published', alg: 'RS256', use: 'sig' };
    unpublished = (await generateKeyPair('RS256')).privateKey;
    aad = await startDirectory({ front: APP, multiTenant: true, intercept: (req, res) => tokenAnswers(req, res) });
    idp = aad.idp;
  });
  after(() => idp.close());

  /** The directory's keys and token endpoint answer as the test says. */
  function tokenAnswers(req: IncomingMessage, res: ServerResponse): boolean {
    const json = (body: unknown) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === `/${TENANT}/v2.0/jwks`) {
      json({ keys: [publicJwk] });
      return true;
    }
    if (req.method === 'POST' && req.url === `/${TENANT}/v2.0/token`) {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        grantTypes.push(new URLSearchParams(Buffer.concat(chunks).toString()).get('grant_type') ?? '');
        json(answer);
      });
      return true;
    }
    return false;
  }

  const issuerOf = (tenant: string) => idp.issuer.replace(TENANT, tenant);

  function client(allowedTenants: readonly string[] = [TENANT, OTHER_TENANT]): OidcProviderClient {
    const document = { identityProviders: aad.identityProviders({ validation: { allowedTenants } }) };
    const { config } = resolveAuthConfig(document, aad.env);
    return new OidcProviderClient(config.providers.get('aad') as OidcProviderConfig);
  }

  /** A sign-in's ID token claims, the directory's as they come for TENANT, with `changes` (undefined: left out). */
  function claims(changes: Record<string, unknown> = {}): JWTPayload {
    const now = Math.floor(Date.now() / 1000);
    const base: Record<string, unknown> = {
      iss: issuerOf(TENANT),
      sub: 'alice-sub',
      aud: CLIENT,
      tid: TENANT,
      oid: '00000000-0000-0000-0000-0000000000aa',
      nonce: NONCE,
      iat: now,
      nbf: now,
      exp: now + 600,
      ...changes,
    };
    return Object.fromEntries(Object.entries(base).filter(([, value]) => value !== undefined));
  }

  async function idToken(payload: JWTPayload, signing: Signing = 'published'): Promise<string> {
    if (signing === 'none') {
      const part = (value: object) => base64url.encode(JSON.stringify(value));
      return `${part({ alg: 'none', typ: 'JWT' })}.${part(payload)}.`;
    }
    if (signing === 'hs256-public-key') {
      // The classic confusion: the provider's public key (as PEM) used as an HMAC secret.
      const pem = createPublicKey({ key: publicJwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
      return new SignJWT(payload).setProtectedHeader({ alg: 'HS256', kid: 'published' }).sign(Buffer.from(pem));
    }
    const key = signing === 'published' ? published : unpublished;
    return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: 'published', typ: 'JWT' }).sign(key);
  }

  /** The token endpoint answers `id_token` (none when undefined) with an access and a refresh token. */
  function answering(id_token: string | undefined): void {
    answer = {
      access_token: ACCESS_TOKEN,
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: 'rt-new',
      ...(id_token !== undefined ? { id_token } : {}),
    };
  }

  function callback(iss: string = issuerOf(TENANT)): URL {
    const url = new URL(REDIRECT);
    url.search = new URLSearchParams({ code: 'the-code', state: STATE, iss }).toString();
    return url;
  }

  const checks = { redirectUri: REDIRECT, state: STATE, nonce: NONCE, codeVerifier: 'v'.repeat(43) };

  /** The refusal of `attempt`: a ProviderRefusedError that names neither the tokens nor the client's secret. */
  async function refusal(attempt: Promise<unknown>, token: string | undefined): Promise<string> {
    const error = await attempt.then(
      () => expect.fail('a session from a token that should have been refused'),
      (caught: unknown) => caught as Error,
    );
    expect(error, error.stack).to.be.instanceOf(ProviderRefusedError);
    for (const secret of [token, ACCESS_TOKEN, aad.clientSecret, 'rt-new']) {
      if (secret !== undefined) expect(error.message).not.to.include(secret);
    }
    return error.message;
  }

  /** Each way an ID token must not pass, and why it is refused. */
  const forgeries: ReadonlyArray<{ name: string; payload: () => JWTPayload; signing?: Signing; reason: RegExp }> = [
    { name: 'expired', payload: () => claims({ exp: Math.floor(Date.now() / 1000) - 3600 }), reason: /expired/ },
    { name: 'alg none', payload: () => claims(), signing: 'none', reason: /algorithm not allowed|malformed/ },
    {
      name: 'HS256 with the public key as secret',
      payload: () => claims(),
      signing: 'hs256-public-key',
      reason: /algorithm not allowed/,
    },
    {
      name: 'signed by a key the directory does not publish',
      payload: () => claims(),
      signing: 'unpublished',
      reason: /signature/,
    },
    {
      name: "another tenant's issuer with this tid",
      payload: () => claims({ iss: issuerOf(OTHER_TENANT) }),
      reason: /iss/,
    },
    { name: "this tenant's issuer with another tid", payload: () => claims({ tid: OTHER_TENANT }), reason: /iss/ },
    { name: 'no tid', payload: () => claims({ tid: undefined }), reason: /issuer not accepted/ },
    { name: 'a tid that is not a tenant id', payload: () => claims({ tid: '../x' }), reason: /issuer not accepted/ },
    { name: 'another audience', payload: () => claims({ aud: 'other-app' }), reason: /aud/ },
    {
      name: 'several audiences and no authorized party',
      payload: () => claims({ aud: ['other-app', CLIENT] }),
      reason: /azp missing/,
    },
    {
      name: 'several audiences, another authorized party',
      payload: () => claims({ aud: ['other-app', CLIENT], azp: 'other-app' }),
      reason: /azp check_failed/,
    },
    { name: 'no subject', payload: () => claims({ sub: undefined }), reason: /sub missing/ },
    { name: 'an empty subject', payload: () => claims({ sub: '' }), reason: /sub missing/ },
    { name: 'no issue time', payload: () => claims({ iat: undefined }), reason: /iat missing/ },
    { name: 'not valid yet', payload: () => claims({ nbf: Math.floor(Date.now() / 1000) + 3600 }), reason: /nbf/ },
    { name: 'no expiry', payload: () => claims({ exp: undefined }), reason: /exp/ },
  ];

  describe('code redemption', () => {
    it('a well-made ID token of an allowed tenant signs in (so each refusal below is of what the test changed)', async () => {
      answering(await idToken(claims()));
      const tokens = await client().redeem(callback(), checks);
      expect(tokens.claims?.sub).to.equal('alice-sub');
      expect(tokens.claims?.tid).to.equal(TENANT);
      expect(tokens.accessToken).to.equal(ACCESS_TOKEN);
      expect(grantTypes.at(-1)).to.equal('authorization_code');
    });

    for (const forgery of forgeries) {
      it(`refuses an ID token: ${forgery.name}`, async () => {
        const token = await idToken(forgery.payload(), forgery.signing);
        answering(token);
        expect(await refusal(client().redeem(callback(), checks), token)).to.match(forgery.reason);
      });
    }

    it('refuses an ID token without the nonce of the sign-in, or with another (a replayed one)', async () => {
      for (const nonce of [undefined, 'n-of-another-sign-in']) {
        const token = await idToken(claims({ nonce }));
        answering(token);
        expect(await refusal(client().redeem(callback(), checks), token)).to.match(/nonce mismatch/);
      }
    });

    it('refuses a tenant outside allowedTenants, however well made its token', async () => {
      const token = await idToken(claims({ iss: issuerOf(OTHER_TENANT), tid: OTHER_TENANT }));
      answering(token);
      const message = await refusal(client([TENANT]).redeem(callback(issuerOf(OTHER_TENANT)), checks), token);
      expect(message).to.match(/issuer not accepted/);
    });

    it('refuses an answer without an ID token, and a callback naming another issuer than the token', async () => {
      answering(undefined);
      expect(await refusal(client().redeem(callback(), checks), undefined)).to.match(/no ID token/);
      const token = await idToken(claims());
      answering(token);
      expect(await refusal(client().redeem(callback(issuerOf(OTHER_TENANT)), checks), token)).to.match(/callback iss/);
    });
  });

  describe('refresh', () => {
    it('takes a well-made new ID token, and an answer with none', async () => {
      answering(await idToken(claims({ nonce: undefined })));
      const refreshed = await client().refresh('rt-old');
      expect(refreshed.claims?.sub).to.equal('alice-sub');
      expect(grantTypes.at(-1)).to.equal('refresh_token');
      answering(undefined);
      const bare = await client().refresh('rt-old');
      expect(bare.claims).to.equal(undefined);
      expect(bare.accessToken).to.equal(ACCESS_TOKEN);
    });

    for (const forgery of forgeries) {
      it(`refuses a new ID token: ${forgery.name}`, async () => {
        const token = await idToken({ ...forgery.payload(), nonce: undefined } as JWTPayload, forgery.signing);
        answering(token);
        expect(await refusal(client().refresh('rt-old'), token)).to.match(forgery.reason);
      });
    }

    it("refuses a new ID token of another tenant or subject than the session's sign-in", async () => {
      const signedIn = await idToken(claims());
      const same = await idToken(claims({ nonce: undefined }));
      answering(same);
      expect((await client().refresh('rt-old', undefined, signedIn)).claims?.sub).to.equal('alice-sub');
      for (const [changes, reason] of [
        [{ iss: issuerOf(OTHER_TENANT), tid: OTHER_TENANT }, /iss not the sign-in issuer/],
        [{ sub: 'mallory-sub' }, /sub not the sign-in subject/],
      ] as const) {
        const token = await idToken(claims({ ...changes, nonce: undefined }));
        answering(token);
        expect(await refusal(client().refresh('rt-old', undefined, signedIn), token)).to.match(reason);
      }
    });

    it('refuses a new ID token of a tenant no longer allowed', async () => {
      const token = await idToken(claims({ iss: issuerOf(OTHER_TENANT), tid: OTHER_TENANT, nonce: undefined }));
      answering(token);
      expect(await refusal(client([TENANT]).refresh('rt-old'), token)).to.match(/issuer not accepted/);
    });
  });

  describe("a client's own code (client-directed)", () => {
    it('takes a well-made ID token', async () => {
      answering(await idToken(claims({ nonce: undefined })));
      const tokens = await client().redeemClientCode('the-code', REDIRECT, undefined);
      expect(tokens.claims?.oid).to.equal('00000000-0000-0000-0000-0000000000aa');
    });

    for (const forgery of forgeries) {
      it(`refuses an ID token: ${forgery.name}`, async () => {
        const token = await idToken({ ...forgery.payload(), nonce: undefined } as JWTPayload, forgery.signing);
        answering(token);
        expect(await refusal(client().redeemClientCode('the-code', REDIRECT, undefined), token)).to.match(
          forgery.reason,
        );
      });
    }

    it('refuses an answer without an ID token', async () => {
      answering(undefined);
      expect(await refusal(client().redeemClientCode('the-code', REDIRECT, undefined), undefined)).to.match(
        /no ID token/,
      );
    });
  });
});
