// Pushed authorization requests (RFC 9126) with a real oidc-provider: used when the provider's
// metadata requires them or login.pushedAuthorizationRequests says so; the browser then carries
// only the client id and the request_uri, never the sign-in's parameters.
import { randomBytes } from 'node:crypto';

import { expect } from 'chai';

import { resolveAuthConfig } from '../../../src/core/config/auth-config.js';
import { startDevIdentityProvider, type RunningIdentityProvider } from '../../../src/dev/identity-provider.js';
import { Browser } from '../../support/browser.js';
import { signIn, startGatewayDeployment, type Deployment } from '../../support/sign-in.js';

const CLIENT = 'par-app';

async function deploymentWith(options: {
  readonly features?: Record<string, unknown>;
  readonly clientMetadata?: Record<string, unknown>;
  readonly login?: Record<string, unknown>;
}): Promise<{ deployment: Deployment; pushed: () => number }> {
  const secret = randomBytes(16).toString('hex');
  let idp: RunningIdentityProvider | undefined;
  let pushes = 0;
  const started = await startGatewayDeployment({
    prepare: async (front) => {
      idp = await startDevIdentityProvider({
        clients: [
          {
            clientId: CLIENT,
            clientSecret: secret,
            redirectUris: [`${front}/.auth/login/corp/callback`],
            postLogoutRedirectUris: [],
            ...(options.clientMetadata ? { metadata: options.clientMetadata } : {}),
          },
        ],
        ...(options.features ? { features: options.features } : {}),
        middleware: [
          (async (ctx: { path: string; status: number }, next: () => Promise<void>) => {
            await next();
            if (ctx.path === '/request' && ctx.status === 201) pushes++;
          }) as never,
        ],
      });
      return {
        document: {
          identityProviders: {
            customOpenIdConnectProviders: {
              corp: {
                registration: {
                  clientId: CLIENT,
                  clientCredential: { clientSecretSettingName: 'CORP_SECRET' },
                  openIdConnectConfiguration: {
                    wellKnownOpenIdConfiguration: `${idp.issuer}/.well-known/openid-configuration`,
                  },
                },
                login: { scopes: ['openid', 'profile'], ...options.login },
              },
            },
          },
        },
        env: { CORP_SECRET: secret },
        close: () => idp!.close(),
      };
    },
  });
  return { deployment: { ...started, idp: idp!, clientSecret: secret }, pushed: () => pushes };
}

/** The provider's authorization URL the browser was sent to. */
function authorizationHop(hops: ReadonlyArray<{ url: string }>, issuer: string): URL {
  const hop = hops.find((h) => h.url.startsWith(`${issuer}/auth`));
  if (hop === undefined) throw new Error(`no hop to ${issuer}/auth`);
  return new URL(hop.url);
}

describe('pushed authorization requests (a real oidc-provider)', function () {
  this.timeout(60_000);

  it("the provider's metadata requires them: the parameters are pushed, the browser carries only the request_uri", async () => {
    const { deployment, pushed } = await deploymentWith({
      features: { pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: true } },
    });
    try {
      const { hops, final } = await signIn(new Browser(), deployment);
      expect(final.status, final.body).to.equal(200);
      expect(pushed()).to.equal(1);
      const sent = authorizationHop(hops, deployment.idp.issuer);
      expect([...sent.searchParams.keys()].sort()).to.deep.equal(['client_id', 'request_uri']);
      expect(sent.searchParams.get('request_uri')).to.match(/^urn:ietf:params:oauth:request_uri:/);
    } finally {
      await deployment.close();
    }
  });

  it('a client the provider requires them of: login.pushedAuthorizationRequests pushes them; without it the provider refuses', async () => {
    const required = { require_pushed_authorization_requests: true };
    const { deployment, pushed } = await deploymentWith({
      clientMetadata: required,
      login: { pushedAuthorizationRequests: true },
    });
    try {
      const { final } = await signIn(new Browser(), deployment);
      expect(final.status, final.body).to.equal(200);
      expect(pushed()).to.equal(1);
    } finally {
      await deployment.close();
    }
    const without = await deploymentWith({ clientMetadata: required });
    try {
      const hops = await new Browser().follow(`${without.deployment.url}/protected`);
      // The parameters went in the URL; the provider sends the browser back with its refusal: a 401 page.
      expect(authorizationHop(hops, without.deployment.idp.issuer).searchParams.get('scope')).to.equal(
        'openid profile',
      );
      const last = hops.at(-1)!;
      expect(last.status).to.equal(401);
      expect(new URL(last.url).searchParams.get('error_description')).to.equal(
        'Pushed Authorization Request must be used',
      );
      expect(without.pushed()).to.equal(0);
    } finally {
      await without.deployment.close();
    }
  });

  it('configured, with a provider that offers none: a clear 502 at the start of the sign-in', async () => {
    const { deployment } = await deploymentWith({
      features: { pushedAuthorizationRequests: { enabled: false } },
      login: { pushedAuthorizationRequests: true },
    });
    try {
      const answer = await new Browser().request(`${deployment.url}/.auth/login/corp`);
      expect(answer.status).to.equal(502);
      expect(answer.body).to.include('The identity provider refused to start the sign-in');
    } finally {
      await deployment.close();
    }
  });
});

describe('login.pushedAuthorizationRequests in the configuration', () => {
  it('is read for every OpenID provider kind, and left to the metadata when absent', () => {
    const login = { pushedAuthorizationRequests: true };
    const { config } = resolveAuthConfig(
      {
        identityProviders: {
          azureActiveDirectory: {
            registration: { openIdIssuer: 'https://login.microsoftonline.com/tenant/v2.0', clientId: 'a' },
            login,
          },
          google: { registration: { clientId: 'g', clientSecretSettingName: 'G' }, login },
          customOpenIdConnectProviders: {
            corp: {
              registration: {
                clientId: 'c',
                openIdConnectConfiguration: {
                  wellKnownOpenIdConfiguration: 'https://idp.example/.well-known/openid-configuration',
                },
              },
              login,
            },
            other: {
              registration: {
                clientId: 'o',
                openIdConnectConfiguration: {
                  wellKnownOpenIdConfiguration: 'https://idp.example/.well-known/openid-configuration',
                },
              },
            },
          },
        },
        globalValidation: { redirectToProvider: 'corp' },
      },
      { G: 'secret' },
    );
    for (const alias of ['aad', 'google', 'corp'])
      expect(config.providers.get(alias), alias).to.have.property('pushedAuthorizationRequests', true);
    expect(config.providers.get('other')).not.to.have.property('pushedAuthorizationRequests');
  });
});
