// private_key_jwt (RFC 7523): gatehouse authenticates to a real oidc-provider with its own key
// (RS256, ES256, PS256; from a file or a setting), every assertion new; the key published at
// /.auth/client-keys/<provider> is what the provider registers; the directory's certificate.
import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';
import { decodeJwt, decodeProtectedHeader } from 'jose';

import { AuthConfigError, resolveAuthConfig } from '../../../src/core/config/auth-config.js';
import { ClientKey } from '../../../src/core/oidc/client-key.js';
import { startDevIdentityProvider, type RunningIdentityProvider } from '../../../src/dev/identity-provider.js';
import { Browser } from '../../support/browser.js';
import { signIn, startGatewayDeployment, type Deployment } from '../../support/sign-in.js';

const CLIENT = 'keyed-app';
const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-client-key-'));
after(() => rmSync(directory, { recursive: true, force: true }));

/** A key (and self-signed certificate) made by openssl, as an operator makes one: the files' paths. */
function makeKey(name: string, algorithm: 'rsa' | 'ec'): { key: string; certificate: string } {
  const key = path.join(directory, `${name}.key.pem`);
  const certificate = path.join(directory, `${name}.cert.pem`);
  const newKey =
    algorithm === 'rsa' ? ['-newkey', 'rsa:2048'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
  execFileSync(
    'openssl',
    ['req', '-x509', ...newKey, '-nodes', '-keyout', key, '-out', certificate, '-days', '2', '-subj', `/CN=${name}`],
    { stdio: 'ignore' },
  );
  return { key, certificate };
}

interface TokenRequest {
  readonly assertion: string | undefined;
  readonly assertionType: string | undefined;
  readonly secret: string | undefined;
  readonly grantType: string;
  readonly status: number;
}

/** oidc-provider middleware that notes each token request's client authentication and outcome. */
function recordTokenRequests(tokenRequests: TokenRequest[]) {
  return async (ctx: { path: string; status: number; oidc?: { params?: unknown } }, next: () => Promise<void>) => {
    await next();
    if (!ctx.path.endsWith('/token')) return;
    const params = (ctx.oidc?.params ?? {}) as Record<string, string | undefined>;
    tokenRequests.push({
      assertion: params.client_assertion,
      assertionType: params.client_assertion_type,
      secret: params.client_secret,
      grantType: String(params.grant_type),
      status: ctx.status,
    });
  };
}

/** A provider expecting private_key_jwt from CLIENT, with the key `jwks`; gatehouse configured by `credential`. */
async function deploymentWith(
  jwks: object,
  credential: Record<string, unknown>,
  env: Record<string, string> = {},
): Promise<{ deployment: Deployment; tokenRequests: TokenRequest[] }> {
  const tokenRequests: TokenRequest[] = [];
  let idp: RunningIdentityProvider | undefined;
  const deployment = await startGatewayDeployment({
    prepare: async (front) => {
      idp = await startDevIdentityProvider({
        clients: [
          {
            clientId: CLIENT,
            clientSecret: 'unused-secret-of-a-keyed-client',
            redirectUris: [`${front}/.auth/login/corp/callback`],
            postLogoutRedirectUris: [],
            metadata: { token_endpoint_auth_method: 'private_key_jwt', jwks },
          },
        ],
        middleware: [recordTokenRequests(tokenRequests) as never],
      });
      return {
        document: {
          identityProviders: {
            customOpenIdConnectProviders: {
              corp: {
                registration: {
                  clientId: CLIENT,
                  clientCredential: credential,
                  openIdConnectConfiguration: {
                    wellKnownOpenIdConfiguration: `${idp.issuer}/.well-known/openid-configuration`,
                  },
                },
                login: { scopes: ['openid', 'profile', 'offline_access'] },
              },
            },
          },
        },
        env,
        close: () => idp!.close(),
      };
    },
  });
  return { deployment: { ...deployment, idp: idp!, clientSecret: '' }, tokenRequests };
}

describe('private_key_jwt client authentication (a real oidc-provider)', function () {
  this.timeout(60_000);

  const cases = [
    { name: 'RS256, key from a file', type: 'rsa', alg: 'RS256', from: 'file' },
    { name: 'ES256, key from a setting', type: 'ec', alg: 'ES256', from: 'setting' },
    { name: 'PS256 (signingAlgorithm), key from a setting', type: 'rsa', alg: 'PS256', from: 'setting' },
  ] as const;
  for (const { name, type, alg, from } of cases) {
    it(`signs in and refreshes with ${name}: a new assertion for each request, the key the provider registered`, async () => {
      const files = makeKey(`k-${alg}`, type);
      const pem = readFileSync(files.key, 'utf8');
      const published = await ClientKey.load({
        privateKeyPem: pem,
        ...(alg === 'PS256' ? { algorithm: 'PS256' } : {}),
      });
      const credential = {
        ...(from === 'file' ? { privateKeyFile: files.key } : { privateKeySettingName: 'CORP_CLIENT_KEY' }),
        ...(alg === 'PS256' ? { signingAlgorithm: 'PS256' } : {}),
      };
      const { deployment, tokenRequests } = await deploymentWith(published.jwks, credential, {
        CORP_CLIENT_KEY: pem,
      });
      try {
        // What gatehouse publishes for the provider to register: the public key, and nothing private.
        const keys = await new Browser().request(`${deployment.url}/.auth/client-keys/corp`);
        expect(keys.status).to.equal(200);
        const jwks = JSON.parse(keys.body) as { keys: Array<Record<string, unknown>> };
        expect(jwks).to.deep.equal(published.jwks);
        expect(jwks.keys[0]).to.include({ alg, use: 'sig' });
        for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(jwks.keys[0]).not.to.have.property(secret);

        const browser = new Browser();
        const { final } = await signIn(browser, deployment, '/protected', { username: 'demo', password: 'demo' });
        expect(final.status, final.body).to.equal(200);
        const refreshed = await browser.request(`${deployment.url}/.auth/refresh`);
        expect(refreshed.status, refreshed.body).to.equal(200);

        expect(tokenRequests.map((r) => [r.grantType, r.status])).to.deep.equal([
          ['authorization_code', 200],
          ['refresh_token', 200],
        ]);
        const jtis = new Set<unknown>();
        for (const request of tokenRequests) {
          expect(request.secret).to.equal(undefined);
          expect(request.assertionType).to.equal('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
          expect(decodeProtectedHeader(request.assertion!)).to.include({ alg, kid: jwks.keys[0]!.kid });
          const claims = decodeJwt(request.assertion!);
          expect(claims).to.include({ iss: CLIENT, sub: CLIENT, aud: deployment.idp.issuer });
          jtis.add(claims.jti);
        }
        expect(jtis.size, 'each assertion its own jti').to.equal(2);
      } finally {
        await deployment.close();
      }
    });
  }

  it('a client assertion reused is refused by the provider; gatehouse never reuses one', async () => {
    const files = makeKey('k-replay', 'ec');
    const pem = readFileSync(files.key, 'utf8');
    const published = await ClientKey.load({ privateKeyPem: pem });
    const { deployment, tokenRequests } = await deploymentWith(published.jwks, { privateKeyFile: files.key });
    try {
      const browser = new Browser();
      await signIn(browser, deployment);
      const stolen = tokenRequests[0]!.assertion!;
      // Someone who saw the assertion (a log, a proxy) replays it within its minute.
      const replay = await fetch(`${deployment.idp.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: 'anything',
          client_id: CLIENT,
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: stolen,
        }),
      });
      expect(replay.status).to.equal(401);
      expect(((await replay.json()) as { error: string }).error).to.equal('invalid_client');
      // gatehouse's own next request is not a replay: it signs a new assertion.
      expect((await browser.request(`${deployment.url}/.auth/refresh`)).status).to.equal(200);
      expect(tokenRequests.at(-1)!.status).to.equal(200);
      expect(decodeJwt(tokenRequests.at(-1)!.assertion!).jti).not.to.equal(decodeJwt(stolen).jti);
    } finally {
      await deployment.close();
    }
  });

  it("Microsoft's directory: the certificate's thumbprint in each assertion (x5t), the token endpoint its audience", async () => {
    const files = makeKey('k-directory', 'rsa');
    const certificate = new X509Certificate(readFileSync(files.certificate));
    const thumbprint = certificate.fingerprint.replaceAll(':', '');
    const settings = {
      privateKeyPem: readFileSync(files.key, 'utf8'),
      certificatePem: readFileSync(files.certificate, 'utf8'),
    };
    const published = await ClientKey.load(settings);
    expect(published.certificateThumbprint).to.equal(thumbprint.toUpperCase());
    expect(published.jwks.keys[0]).to.include({ x5t: createHash('sha1').update(certificate.raw).digest('base64url') });
    const tenant = '72f988bf-86f1-41af-91ab-2d7cd011db47';
    const tokenRequests: TokenRequest[] = [];
    let idp: RunningIdentityProvider | undefined;
    const deployment = await startGatewayDeployment({
      prepare: async (front) => {
        idp = await startDevIdentityProvider({
          issuerPath: `/${tenant}/v2.0`,
          clients: [
            {
              clientId: CLIENT,
              clientSecret: 'unused-secret-of-a-keyed-client',
              redirectUris: [`${front}/.auth/login/aad/callback`],
              postLogoutRedirectUris: [],
              metadata: { token_endpoint_auth_method: 'private_key_jwt', jwks: published.jwks },
            },
          ],
          middleware: [recordTokenRequests(tokenRequests) as never],
        });
        return {
          document: {
            identityProviders: {
              azureActiveDirectory: {
                registration: {
                  openIdIssuer: idp.issuer,
                  clientId: CLIENT,
                  clientSecretCertificateThumbprint: thumbprint.toLowerCase(),
                  clientCredential: { privateKeyFile: files.key, certificateFile: files.certificate },
                },
              },
            },
          },
          env: {},
          close: () => idp!.close(),
        };
      },
    });
    try {
      // The provider's pages are at its origin, its issuer under the tenant's path: signed in by hand.
      const browser = new Browser();
      const loginPage = (await browser.follow(`${deployment.url}/protected`)).at(-1)!;
      const final = (await browser.submitForm(loginPage, /\/login$/, { username: 'demo', password: 'demo' })).at(-1)!;
      expect(final.status, final.body).to.equal(200);
      expect(final.url).to.equal(`${deployment.url}/protected`);
      expect(tokenRequests).to.have.length(1);
      const header = decodeProtectedHeader(tokenRequests[0]!.assertion!);
      expect(header).to.include({ alg: 'RS256', x5t: createHash('sha1').update(certificate.raw).digest('base64url') });
      expect(decodeJwt(tokenRequests[0]!.assertion!).aud).to.equal(`${idp!.issuer}/token`);
    } finally {
      await deployment.close();
    }
  });
});

describe('the client key in the configuration', () => {
  const files = { rsa: makeKey('c-rsa', 'rsa'), ec: makeKey('c-ec', 'ec') };
  const custom = (clientCredential: Record<string, unknown>) => ({
    identityProviders: {
      customOpenIdConnectProviders: {
        corp: {
          registration: {
            clientId: 'c',
            clientCredential,
            openIdConnectConfiguration: {
              wellKnownOpenIdConfiguration: 'https://idp.example/.well-known/openid-configuration',
            },
          },
        },
      },
    },
  });
  const problems = (document: object, env: Record<string, string> = {}) => {
    try {
      resolveAuthConfig(document, env);
      return [];
    } catch (error) {
      if (!(error instanceof AuthConfigError)) throw error;
      return error.problems;
    }
  };
  const at = 'identityProviders.customOpenIdConnectProviders.corp.registration.clientCredential';

  it('is read from its file or setting; what is wrong with it is said at start, never its text', () => {
    const pem = readFileSync(files.rsa.key, 'utf8');
    const config = resolveAuthConfig(custom({ privateKeySettingName: 'CORP_KEY' }), { CORP_KEY: pem }).config;
    expect(config.providers.get('corp')).to.have.nested.property('clientKey.privateKeyPem', pem);
    expect(problems(custom({ privateKeyFile: path.join(directory, 'missing.pem') }))).to.deep.equal([
      `${at}.privateKeyFile: ${path.join(directory, 'missing.pem')} cannot be read (ENOENT)`,
    ]);
    expect(problems(custom({ privateKeySettingName: 'CORP_KEY' }), { CORP_KEY: 'not a key' })).to.deep.equal([
      `${at}: the private key is not a PEM private key (PKCS#8, PKCS#1 or SEC1)`,
    ]);
    expect(problems(custom({ privateKeyFile: files.ec.key, signingAlgorithm: 'RS256' }))).to.deep.equal([
      `${at}: RS256 needs an RSA key, and this is a P-256 key`,
    ]);
    expect(
      problems(custom({ privateKeyFile: files.rsa.key, clientSecretSettingName: 'S' }), { S: 'secret' }),
    ).to.deep.equal([`${at}: a client secret and a private key both given; give one`]);
    expect(problems(custom({ privateKeyFile: files.rsa.key, certificateFile: files.ec.certificate }))).to.deep.equal([
      `${at}: the certificate is not the private key's (its public key differs)`,
    ]);
  });

  it("the directory's clientSecretCertificateThumbprint must be the certificate's", () => {
    const directoryDocument = (thumbprint: string) => ({
      identityProviders: {
        azureActiveDirectory: {
          registration: {
            openIdIssuer: 'https://login.microsoftonline.com/tenant/v2.0',
            clientId: 'c',
            clientSecretCertificateThumbprint: thumbprint,
            clientCredential: { privateKeyFile: files.rsa.key, certificateFile: files.rsa.certificate },
          },
        },
      },
    });
    const real = new X509Certificate(readFileSync(files.rsa.certificate)).fingerprint.replaceAll(':', '');
    expect(problems(directoryDocument(real))).to.deep.equal([]);
    expect(problems(directoryDocument('0'.repeat(40)))).to.deep.equal([
      `identityProviders.azureActiveDirectory.registration.clientSecretCertificateThumbprint: is not the thumbprint of the certificate given (${real})`,
    ]);
  });
});
