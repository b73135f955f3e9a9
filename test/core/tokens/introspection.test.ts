// Opaque bearer tokens (oidc-provider's access tokens are opaque by default) checked by token
// introspection (RFC 7662) at a real oidc-provider, through the sidecar and /.auth/verify: the
// same identity a JWT bearer gets; inactive tokens and answers for another client refused (401);
// the endpoint down fails closed (503); answers cached by a digest until the token's exp or the
// configured maximum; the client's credentials and the tokens never logged.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import { expect } from 'chai';

import { resolveAuthConfig } from '../../../src/core/config/auth-config.js';
import { introspectedClaims, isOpaqueToken, trustedUntil } from '../../../src/core/tokens/introspection.js';
import { InvalidTokenError } from '../../../src/core/tokens/errors.js';
import { startDevIdentityProvider, type RunningIdentityProvider } from '../../../src/dev/identity-provider.js';
import { Browser } from '../../support/browser.js';
import { capturingLogger } from '../../support/logs.js';
import { principal } from '../../support/principal.js';
import { signIn, startGatewayDeployment, type Deployment } from '../../support/sign-in.js';

const CLIENT = 'gatehouse-app';

/** How the test shapes the provider's introspection endpoint: as it is, down, or answering for another client. */
type IntrospectionMode = 'real' | 'down' | 'other-client' | 'error' | 'roles';

describe('opaque bearer tokens: introspection at a real oidc-provider', function () {
  this.timeout(60_000);
  const secret = randomBytes(16).toString('hex');
  const logs = capturingLogger('debug');
  let deployment: Deployment;
  let mode: IntrospectionMode = 'real';
  /** What the crafted answer's user has (mode 'roles'). */
  let roles: string[] = [];
  let introspections = 0;
  let accessToken: string;
  let jwtIdentity: ReturnType<typeof principal>;

  async function start(
    introspection: Record<string, unknown> | undefined,
    gatehouse?: Record<string, unknown>,
  ): Promise<Deployment> {
    let idp: RunningIdentityProvider | undefined;
    const started = await startGatewayDeployment({
      logger: logs.logger,
      prepare: async (front) => {
        idp = await startDevIdentityProvider({
          clients: [
            {
              clientId: CLIENT,
              clientSecret: secret,
              redirectUris: [`${front}/.auth/login/dev/callback`],
              postLogoutRedirectUris: [],
            },
          ],
          features: { introspection: { enabled: true } },
          intercept: (req: IncomingMessage, res: ServerResponse) => {
            if (!req.url?.startsWith('/token/introspection')) return false;
            introspections++;
            if (mode === 'real') return false;
            if (mode === 'down') {
              req.socket.destroy();
              return true;
            }
            if (mode === 'error') {
              res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}');
              return true;
            }
            const now = Math.floor(Date.now() / 1000);
            res.writeHead(200, { 'content-type': 'application/json' }).end(
              JSON.stringify({
                active: true,
                client_id: mode === 'roles' ? CLIENT : 'another-app',
                roles,
                sub: 'demo',
                iss: idp!.issuer,
                exp: now + 600,
                token_type: 'Bearer',
              }),
            );
            return true;
          },
        });
        return {
          document: {
            ...(gatehouse !== undefined ? { gatehouse } : {}),
            identityProviders: {
              customOpenIdConnectProviders: {
                dev: {
                  registration: {
                    clientId: CLIENT,
                    clientCredential: { clientSecretSettingName: 'DEV_SECRET' },
                    openIdConnectConfiguration: {
                      wellKnownOpenIdConfiguration: `${idp.issuer}/.well-known/openid-configuration`,
                    },
                  },
                  login: { nameClaimType: 'name', scopes: ['openid', 'profile', 'email'] },
                  ...(introspection !== undefined ? { validation: { introspection } } : {}),
                },
              },
            },
          },
          env: { DEV_SECRET: secret },
          close: () => idp!.close(),
        };
      },
    });
    return { ...started, idp: idp!, clientSecret: secret };
  }

  before(async () => {
    deployment = await start(undefined);
    const { final } = await signIn(new Browser(), deployment);
    const seen = JSON.parse(final.body) as { headers: Record<string, string> };
    accessToken = seen.headers['x-platform-token-dev-access-token']!;
    expect(isOpaqueToken(accessToken), 'oidc-provider issues opaque access tokens').to.equal(true);
    // The identity a session of the same user gets (a JWT bearer's is built the same way).
    jwtIdentity = principal(seen.headers);
  });
  after(() => deployment.close());
  beforeEach(() => {
    mode = 'real';
  });

  const bearer = (token: string, path = '/api/orders') =>
    new Browser().request(`${deployment.url}${path}`, { headers: { authorization: `Bearer ${token}` } });

  it('an active token of this client is let in with its identity; the answer is cached, by a digest of the token', async () => {
    introspections = 0;
    const answer = await bearer(accessToken);
    expect(answer.status, answer.body).to.equal(200);
    const seen = JSON.parse(answer.body) as { headers: Record<string, string> };
    expect(seen.headers['x-platform-client-principal-id']).to.equal('demo');
    expect(seen.headers['x-platform-client-principal-idp']).to.equal('dev');
    const identity = principal(seen.headers);
    expect(identity).to.include({ auth_typ: 'dev', name_typ: jwtIdentity.name_typ, role_typ: jwtIdentity.role_typ });
    expect(seen.headers['x-platform-token-dev-access-token']).to.equal(accessToken);
    expect(introspections).to.equal(1);
    for (let i = 0; i < 5; i++) expect((await bearer(accessToken)).status).to.equal(200);
    expect(introspections, 'later requests are answered from the cache').to.equal(1);
  });

  it('through /.auth/verify: the same decision, 200 with the identity headers', async () => {
    const host = new URL(deployment.url).host;
    const answer = await new Browser().request(`${deployment.url}/.auth/verify`, {
      headers: {
        'x-forwarded-host': host,
        'x-forwarded-proto': 'http',
        'x-original-uri': '/reports',
        'x-original-method': 'GET',
        authorization: `Bearer ${accessToken}`,
      },
    });
    expect(answer.status).to.equal(200);
    expect(answer.headers['x-platform-client-principal-id']).to.equal('demo');
    const refused = await new Browser().request(`${deployment.url}/.auth/verify`, {
      headers: {
        'x-forwarded-host': host,
        'x-forwarded-proto': 'http',
        'x-original-uri': '/reports',
        'x-original-method': 'GET',
        authorization: `Bearer ${randomBytes(32).toString('base64url')}`,
      },
    });
    expect(refused.status).to.equal(401);
  });

  it('a token the provider says is not active is refused (401 invalid_token)', async () => {
    const answer = await bearer(randomBytes(32).toString('base64url'));
    expect(answer.status).to.equal(401);
    expect(JSON.parse(answer.body)).to.deep.equal({
      error: 'invalid_token',
      error_description: 'not active (introspection)',
    });
  });

  it("an answer for another client's token is refused (401)", async () => {
    mode = 'other-client';
    const answer = await bearer(randomBytes(32).toString('base64url'));
    expect(answer.status).to.equal(401);
    expect(JSON.parse(answer.body)).to.have.property('error_description', 'issued to another client (introspection)');
  });

  it('the introspection endpoint down fails closed: 503, never anonymous; an error answer: 401', async () => {
    mode = 'down';
    const down = await bearer(randomBytes(32).toString('base64url'));
    expect(down.status).to.equal(503);
    expect(down.headers['retry-after']).to.equal('5');
    mode = 'error';
    const error = await bearer(randomBytes(32).toString('base64url'));
    expect(error.status).to.equal(401);
    expect(JSON.parse(error.body)).to.have.property('error_description', 'introspection refused (invalid_client)');
  });

  it('neither the client secret nor a token is ever logged', () => {
    const text = logs
      .lines()
      .map((line) => JSON.stringify(line))
      .join('\n');
    expect(text).to.include('bearer token'); // the refusals above were logged
    expect(text).not.to.include(secret);
    expect(text).not.to.include(accessToken);
    expect(text).not.to.include(Buffer.from(`${CLIENT}:${secret}`).toString('base64'));
  });

  it("the authorization rules judge an introspected caller as they judge a JWT bearer (the answer's roles)", async () => {
    const ruled = await start(undefined, {
      authorization: { paths: [{ path: '/admin/*', allow: [{ roles: ['admin'] }] }] },
    });
    try {
      mode = 'roles';
      const ask = (path: string) =>
        new Browser().request(`${ruled.url}${path}`, {
          headers: { authorization: `Bearer ${randomBytes(32).toString('base64url')}`, accept: 'application/json' },
        });
      roles = ['reader'];
      expect((await ask('/admin/users')).status).to.equal(403);
      expect((await ask('/reports')).status).to.equal(200);
      roles = ['admin'];
      expect((await ask('/admin/users')).status).to.equal(200);
    } finally {
      await ruled.close();
    }
  });

  it('validation.introspection.enabled false: an opaque token is refused without asking the provider', async () => {
    const off = await start({ enabled: false });
    try {
      introspections = 0;
      const answer = await new Browser().request(`${off.url}/api`, {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      expect(answer.status).to.equal(401);
      expect(JSON.parse(answer.body)).to.have.property(
        'error_description',
        'not a JWT, and no provider introspects opaque tokens',
      );
      expect(introspections).to.equal(0);
    } finally {
      await off.close();
    }
  });
});

describe('introspection answers and the configuration', () => {
  const now = Date.parse('2026-11-28T12:00:00Z');
  const expected = {
    clientId: 'app',
    audiences: ['app', 'api://orders'],
    issuer: 'https://idp.example',
    now,
    cacheMs: 5 * 60_000,
  };
  const nowS = now / 1000;
  const reason = (answer: Record<string, unknown>) => {
    try {
      introspectedClaims(answer, expected);
      return 'accepted';
    } catch (error) {
      return (error as InvalidTokenError).reason;
    }
  };

  it('an answer is trusted until the token expires or the cache maximum, whichever is sooner', () => {
    const soon = introspectedClaims({ active: true, client_id: 'app', exp: nowS + 60 }, expected);
    expect(trustedUntil(soon.exp, expected)).to.equal(now + 60_000);
    const late = introspectedClaims({ active: true, client_id: 'app', exp: nowS + 3600 }, expected);
    expect(late.exp).to.equal(nowS + 3600);
    expect(trustedUntil(late.exp, expected)).to.equal(now + 5 * 60_000);
    const without = introspectedClaims({ active: true, client_id: 'app' }, expected);
    expect(trustedUntil(without.exp, expected)).to.equal(now + 5 * 60_000);
  });

  it('is for this client when issued to it or naming one of its audiences; otherwise refused', () => {
    expect(reason({ active: true, client_id: 'app' })).to.equal('accepted');
    expect(reason({ active: true, client_id: 'spa', aud: ['api://orders'] })).to.equal('accepted');
    expect(reason({ active: true, client_id: 'spa', aud: 'api://billing' })).to.equal(
      'issued to another client (introspection)',
    );
    expect(reason({ active: true })).to.equal('issued to another client (introspection)');
    expect(reason({ active: false, client_id: 'app' })).to.equal('not active (introspection)');
    expect(reason({ active: 'true', client_id: 'app' })).to.equal('not active (introspection)');
    expect(reason({ active: true, client_id: 'app', exp: nowS })).to.equal('expired');
    expect(reason({ active: true, client_id: 'app', iss: 'https://evil.example' })).to.equal(
      'issuer mismatch (introspection)',
    );
  });

  it('is on by default with the client credentials, off for a public client; enabled needs credentials', () => {
    const document = (registration: Record<string, unknown>, validation?: Record<string, unknown>) => ({
      identityProviders: {
        customOpenIdConnectProviders: {
          corp: {
            registration: {
              clientId: 'c',
              ...registration,
              openIdConnectConfiguration: {
                wellKnownOpenIdConfiguration: 'https://idp.example/.well-known/openid-configuration',
              },
            },
            ...(validation ? { validation } : {}),
          },
        },
      },
    });
    const introspection = (doc: object, env: Record<string, string> = {}) =>
      (resolveAuthConfig(doc, env).config.providers.get('corp') as { introspection?: unknown }).introspection;
    expect(introspection(document({ clientCredential: { clientSecretSettingName: 'S' } }), { S: 's' })).to.deep.equal({
      enabled: true,
      cacheMs: 5 * 60_000,
    });
    expect(introspection(document({}))).to.deep.equal({ enabled: false, cacheMs: 5 * 60_000 });
    expect(
      introspection(
        document(
          { clientCredential: { clientSecretSettingName: 'S' } },
          { introspection: { endpoint: 'https://idp.example/introspect', cacheDuration: '00:00:30' } },
        ),
        { S: 's' },
      ),
    ).to.deep.equal({ enabled: true, endpoint: 'https://idp.example/introspect', cacheMs: 30_000 });
    expect(() => resolveAuthConfig(document({}, { introspection: { enabled: true } }), {})).to.throw(
      /validation\.introspection\.enabled: introspection needs the client's credentials/,
    );
  });
});
