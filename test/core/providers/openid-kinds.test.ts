// The OpenID Connect provider kinds against real oidc-provider instances
// shaped the way each real provider behaves: the directory's per-tenant
// issuer and multi-tenant template, Google's offline access, Apple's
// form_post callback, signed client secret and one-time `user` field.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http, { type IncomingMessage } from 'node:http';

import { expect } from 'chai';
import { jwtVerify, decodeProtectedHeader } from 'jose';

import { startDevIdentityProvider, type RunningIdentityProvider } from '../../../src/dev/identity-provider.js';
import { Browser, type Response } from '../../support/browser.js';
import { expectClaimMapping } from '../../support/claim-mapping.js';
import { member, startDirectory, TENANT } from '../../support/directory-provider.js';
import { forwarded, principal } from '../../support/principal.js';
import { startGatewayDeployment, type GatewayDeployment } from '../../support/sign-in.js';

const DEMO = { username: 'demo', password: 'demo' };

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** From a protected page through the provider's sign-in form; returns every hop. */
async function signIn(browser: Browser, url: string): Promise<Response[]> {
  const hops = await browser.follow(url);
  const after = await browser.submitForm(hops.at(-1)!, /\/login$/, DEMO);
  return [...hops, ...after];
}

describe('OpenID Connect provider kinds', function () {
  this.timeout(30_000);
  let idp: RunningIdentityProvider | undefined;
  let deployment: GatewayDeployment | undefined;
  afterEach(async () => {
    await deployment?.close();
    await idp?.close();
    deployment = undefined;
    idp = undefined;
  });

  describe('aad (enterprise directory), multi-tenant', () => {
    beforeEach(async () => {
      deployment = await startGatewayDeployment({
        prepare: async (front) => {
          const directory = await startDirectory({
            front,
            multiTenant: true,
            client: { tokenEndpointAuthMethod: 'client_secret_post' },
            users: {
              demo: member('demo', '00000000-0000-0000-0000-0000000000aa', {
                preferred_username: 'alice@contoso.example',
                name: 'Alice',
              }),
            },
            claims: { openid: ['sub', 'oid', 'tid'], profile: ['name', 'preferred_username'] },
          });
          idp = directory.idp;
          return {
            document: {
              identityProviders: directory.identityProviders({
                login: { loginParameters: ['domain_hint=contoso.example', 'scope=openid profile offline_access'] },
              }),
            },
            env: directory.env,
          };
        },
      });
    });

    it('signs in through the template issuer: -ID oid, -NAME preferred_username, login parameters sent', async () => {
      const browser = new Browser();
      const hops = await signIn(browser, `${deployment!.url}/mail`);
      const authorize = new URL(hops.find((h) => h.headers.location?.includes('/auth?'))!.headers.location!);
      expect(authorize.searchParams.get('domain_hint')).to.equal('contoso.example');
      expect(authorize.searchParams.get('scope')!.split(' ')).to.include.members(['openid', 'offline_access']);
      const final = hops.at(-1)!;
      expect(final.status, final.body).to.equal(200);
      const { url, headers } = forwarded(final.body);
      expect(url).to.equal('/mail');
      expect(headers).to.include({
        'x-platform-client-principal-id': '00000000-0000-0000-0000-0000000000aa',
        'x-platform-client-principal-name': 'alice@contoso.example',
        'x-platform-client-principal-idp': 'aad',
      });
      expect(principal(headers).claims).to.deep.include({ typ: 'tid', val: TENANT });
      expect(headers['x-platform-token-aad-refresh-token']).to.be.a('string');
      expectClaimMapping('aad', 'aad', headers);
    });

    it('refreshes through the template issuer too', async () => {
      const browser = new Browser();
      await signIn(browser, `${deployment!.url}/`);
      browser.accept = 'application/json';
      const refreshed = await browser.request(`${deployment!.url}/.auth/refresh`, { method: 'POST' });
      expect(refreshed.status, refreshed.body).to.equal(200);
      expect(idp!.grants.get('refresh_token')).to.equal(1);
    });
  });

  describe('aad, an account its authorization policy refuses', () => {
    const ALLOWED = '00000000-0000-0000-0000-0000000000bb';
    beforeEach(async () => {
      deployment = await startGatewayDeployment({
        prepare: async (front) => {
          const directory = await startDirectory({
            front,
            users: {
              demo: member('demo', '00000000-0000-0000-0000-0000000000aa', {
                preferred_username: 'alice@contoso.example',
              }),
              bob: member('bob', ALLOWED, { preferred_username: 'bob@contoso.example' }),
            },
          });
          idp = directory.idp;
          return {
            document: {
              identityProviders: directory.identityProviders({
                login: { loginParameters: ['prompt=consent'] },
                validation: { defaultAuthorizationPolicy: { allowedPrincipals: { identities: [ALLOWED] } } },
              }),
            },
            env: directory.env,
          };
        },
      });
    });

    it('the 403 page offers a sign-in that lets the person choose another account (the provider would otherwise sign the same one in again)', async () => {
      const browser = new Browser();
      const refused = (await signIn(browser, `${deployment!.url}/mail`)).at(-1)!;
      expect(refused.status).to.equal(403);
      const links = [...refused.body.matchAll(/<a href="([^"]+)">([^<]+)<\/a>/g)].map((m) => [
        m[2],
        m[1]!.replace(/&#38;/g, '&'),
      ]);
      expect(links).to.deep.equal([
        ['Sign in with another account', '/.auth/login/aad?post_login_redirect_uri=%2Fmail&prompt=select_account'],
      ]);
      // The provider still has the refused account's session: a plain sign-in brings it straight back.
      const again = await browser.follow(`${deployment!.url}/.auth/login/aad?post_login_redirect_uri=%2Fmail`);
      expect(again.at(-1)!.status).to.equal(403);
      // The link: the directory's one prompt value replaces the configured one, and the provider shows its form.
      const hops = await browser.follow(new URL(links[0]![1]!, deployment!.url).href);
      const authorize = new URL(hops.find((h) => h.headers.location?.includes('/auth?'))!.headers.location!);
      expect(authorize.searchParams.get('prompt')).to.equal('select_account');
      // Another account than its session's: oidc-provider first ends that session, with a page that submits itself (a browser's script).
      const switching = (await browser.submitForm(hops.at(-1)!, /\/login$/, { username: 'bob', password: 'bob' })).at(
        -1,
      )!;
      const landed = (await browser.submitForm(switching, /\/session\/end\/confirm$/, {})).at(-1)!;
      expect(landed.status, landed.body).to.equal(200);
      const { url, headers } = forwarded(landed.body);
      expect(url).to.equal('/mail');
      expect(headers).to.include({
        'x-platform-client-principal-id': ALLOWED,
        'x-platform-client-principal-name': 'bob@contoso.example',
      });
    });
  });

  describe('google (consumer web)', () => {
    beforeEach(async () => {
      const clientSecret = randomBytes(12).toString('hex');
      deployment = await startGatewayDeployment({
        prepare: async (front) => {
          idp = await startDevIdentityProvider({
            clients: [
              {
                clientId: 'web.apps.example',
                clientSecret,
                redirectUris: [`${front}/.auth/login/google/callback`],
                postLogoutRedirectUris: [],
              },
            ],
          });
          return {
            document: {
              identityProviders: {
                google: {
                  registration: { clientId: 'web.apps.example', clientSecretSettingName: 'GOOGLE_SECRET' },
                  wellKnownOpenIdConfiguration: `${idp.issuer}/.well-known/openid-configuration`,
                },
              },
            },
            env: { GOOGLE_SECRET: clientSecret },
          };
        },
      });
    });

    it('asks for offline access with consent (refresh tokens) and names the user by e-mail', async () => {
      const hops = await signIn(new Browser(), `${deployment!.url}/`);
      const authorize = new URL(hops.find((h) => h.headers.location?.includes('/auth?'))!.headers.location!);
      expect(authorize.searchParams.get('access_type')).to.equal('offline');
      expect(authorize.searchParams.get('prompt')).to.equal('consent');
      const { headers } = forwarded(hops.at(-1)!.body);
      expect(headers).to.include({
        'x-platform-client-principal-id': 'demo',
        'x-platform-client-principal-name': 'demo@example.com',
        'x-platform-client-principal-idp': 'google',
      });
      expect(principal(headers).name_typ).to.equal('email');
    });
  });

  describe('apple (device maker)', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const staticSecret = randomBytes(12).toString('hex');
    const verifiedSecrets: Array<{ header: Record<string, unknown>; claims: Record<string, unknown> }> = [];
    let firstLogin: boolean;

    beforeEach(async () => {
      verifiedSecrets.length = 0;
      firstLogin = true;
      deployment = await startGatewayDeployment({
        prepare: async (front) => {
          idp = await startDevIdentityProvider({
            clients: [
              {
                clientId: 'com.example.web',
                clientSecret: staticSecret,
                redirectUris: [`${front}/.auth/login/apple/callback`],
                postLogoutRedirectUris: [],
                tokenEndpointAuthMethod: 'client_secret_post',
              },
            ],
            // Apple sends the user's name once, on the first sign-in, in the form it POSTs back.
            middleware: [
              async (ctx, next) => {
                await next();
                if (typeof ctx.body === 'string' && ctx.body.includes('Submitting Callback') && firstLogin) {
                  firstLogin = false;
                  const user = JSON.stringify({
                    name: { firstName: 'Ada', lastName: 'Lovelace' },
                    email: 'ada@privaterelay.example',
                  }).replace(/"/g, '&quot;');
                  ctx.body = ctx.body.replace('</form>', `<input type="hidden" name="user" value="${user}"/></form>`);
                }
              },
            ],
            // The token endpoint takes the client secret as an ES256 JWT: checked here, then the provider sees its usual secret.
            intercept: (req, res, issuer) => {
              if (req.method !== 'POST' || req.url !== '/token' || req.headers['x-secret-checked'] === staticSecret)
                return false;
              void (async () => {
                const form = new URLSearchParams(await readAll(req));
                const secret = form.get('client_secret') ?? '';
                try {
                  const { payload, protectedHeader } = await jwtVerify(secret, publicKey, {
                    algorithms: ['ES256'],
                    issuer: 'TEAM123456',
                    audience: 'https://appleid.apple.com',
                    subject: 'com.example.web',
                  });
                  verifiedSecrets.push({
                    header: protectedHeader as Record<string, unknown>,
                    claims: payload as Record<string, unknown>,
                  });
                } catch {
                  res
                    .writeHead(400, { 'content-type': 'application/json' })
                    .end(JSON.stringify({ error: 'invalid_client' }));
                  return;
                }
                form.set('client_secret', staticSecret);
                const inner = http.request(
                  `${issuer}/token`,
                  {
                    method: 'POST',
                    headers: {
                      ...req.headers,
                      'x-secret-checked': staticSecret,
                      'content-length': Buffer.byteLength(form.toString()),
                    },
                  },
                  (answer) => {
                    res.writeHead(answer.statusCode ?? 500, answer.headers);
                    answer.pipe(res);
                  },
                );
                inner.end(form.toString());
              })();
              return true;
            },
          });
          return {
            document: {
              identityProviders: {
                apple: {
                  registration: {
                    clientId: 'com.example.web',
                    teamId: 'TEAM123456',
                    keyId: 'KEY1234567',
                    privateKeySettingName: 'APPLE_PRIVATE_KEY',
                  },
                  wellKnownOpenIdConfiguration: `${idp.issuer}/.well-known/openid-configuration`,
                },
              },
            },
            env: { APPLE_PRIVATE_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
          };
        },
      });
    });

    it('form_post callback, ES256 client secret, the name from the first sign-in’s user field', async () => {
      const browser = new Browser();
      const hops = await signIn(browser, `${deployment!.url}/`);
      const authorize = new URL(hops.find((h) => h.headers.location?.includes('/auth?'))!.headers.location!);
      expect(authorize.searchParams.get('response_mode')).to.equal('form_post');
      // Over plain http the transaction cookie leaves SameSite to the browser (None needs Secure).
      const started = hops.find((h) => h.url.includes('/.auth/login/apple'))!;
      expect(started.setCookies[0]).to.not.match(/SameSite/i);
      const formPost = hops.at(-1)!;
      expect(formPost.body).to.contain('Submitting Callback');
      const after = await browser.submitForm(formPost, /\/\.auth\/login\/apple\/callback$/, {});
      expect(after[0]!.status).to.equal(302);
      const { headers } = forwarded(after.at(-1)!.body);
      expect(headers).to.include({
        'x-platform-client-principal-name': 'Ada Lovelace',
        'x-platform-client-principal-idp': 'apple',
        'x-platform-client-principal-id': 'demo',
      });
      expectClaimMapping('apple', 'apple', headers);
      expect(verifiedSecrets).to.have.length(1);
      expect(verifiedSecrets[0]!.header).to.include({ alg: 'ES256', kid: 'KEY1234567' });
      const { iat, exp } = verifiedSecrets[0]!.claims as { iat: number; exp: number };
      expect(exp - iat).to.be.within(60, 6 * 30 * 24 * 3600);
      const me = JSON.parse(
        (await browser.request(`${deployment!.url}/.auth/me`, { headers: { accept: 'application/json' } })).body,
      ) as Array<{ id_token: string }>;
      expect(decodeProtectedHeader(me[0]!.id_token).alg).to.equal('RS256');
    });

    it('a later sign-in carries no user field: the name falls back to the e-mail address', async () => {
      firstLogin = false;
      const browser = new Browser();
      const hops = await signIn(browser, `${deployment!.url}/`);
      const after = await browser.submitForm(hops.at(-1)!, /\/\.auth\/login\/apple\/callback$/, {});
      expect(forwarded(after.at(-1)!.body).headers['x-platform-client-principal-name']).to.equal('demo@example.com');
    });
  });
});
