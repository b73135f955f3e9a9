// A gateway in front of an echoing app with a real OpenID provider
// (oidc-provider) whose users carry groups, roles and verified or unverified
// addresses, and the authorization rules under test in the configuration.
import { randomBytes } from 'node:crypto';

import {
  startDevIdentityProvider,
  type DevUser,
  type RunningIdentityProvider,
} from '../../src/dev/identity-provider.js';
import type { Logger } from '../../src/logging.js';
import type { GatehouseMetrics } from '../../src/metrics/gatehouse-metrics.js';
import type { Browser, Response } from './browser.js';
import { CLIENT_ID, startGatewayDeployment, type GatewayDeployment } from './sign-in.js';

export interface RulesDeployment extends GatewayDeployment {
  readonly idp: RunningIdentityProvider;
  /** The provider's users, by login; change a user's claims to have the next token say otherwise. */
  readonly users: Record<string, { password: string; claims: Record<string, unknown> }>;
  /** Signs `browser` in as `login` through the provider's page, starting at `path`; every hop. */
  signIn(browser: Browser, login: string, path?: string): Promise<Response[]>;
}

export async function startRulesDeployment(options: {
  readonly users: Record<string, DevUser>;
  readonly authorization: Record<string, unknown>;
  readonly metrics?: GatehouseMetrics;
  readonly logger?: Logger;
  /** The provider keeps its ID tokens thin: the claims come from its userinfo endpoint only. */
  readonly thinIdToken?: boolean;
  /** Extra top-level keys of the document (globalValidation...). */
  readonly document?: Record<string, unknown>;
}): Promise<RulesDeployment> {
  const secret = randomBytes(16).toString('hex');
  const users = Object.fromEntries(
    Object.entries(options.users).map(([login, user]) => [
      login,
      { password: user.password, claims: { ...user.claims } },
    ]),
  );
  let idp: RunningIdentityProvider | undefined;
  const deployment = await startGatewayDeployment({
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    prepare: async (frontUrl) => {
      idp = await startDevIdentityProvider({
        users,
        ...(options.thinIdToken ? { thinIdToken: true } : {}),
        clients: [
          {
            clientId: CLIENT_ID,
            clientSecret: secret,
            redirectUris: [`${frontUrl}/.auth/login/dev/callback`],
            postLogoutRedirectUris: [`${frontUrl}/.auth/logout/complete`],
          },
        ],
        claims: {
          openid: ['sub'],
          profile: ['name', 'preferred_username', 'roles', 'groups', 'realm_access'],
          email: ['email', 'email_verified'],
        },
      });
      return {
        document: {
          identityProviders: {
            customOpenIdConnectProviders: {
              dev: {
                registration: {
                  clientId: CLIENT_ID,
                  clientCredential: { clientSecretSettingName: 'TEST_CLIENT_SECRET' },
                  openIdConnectConfiguration: {
                    wellKnownOpenIdConfiguration: `${idp.issuer}/.well-known/openid-configuration`,
                  },
                },
                login: { nameClaimType: 'name', scopes: ['openid', 'profile', 'email', 'offline_access'] },
              },
            },
          },
          globalValidation: { excludedPaths: ['/public/*'] },
          ...options.document,
          gatehouse: { authorization: options.authorization },
        },
        env: { TEST_CLIENT_SECRET: secret },
        close: () => idp!.close(),
      };
    },
  });
  return {
    ...deployment,
    idp: idp!,
    users,
    async signIn(browser, login, path = '/') {
      const hops = await browser.follow(`${deployment.url}${path}`);
      const page = hops.at(-1)!;
      if (!page.url.startsWith(idp!.issuer))
        throw new Error(`expected the provider's page, got ${page.status} ${page.url}`);
      const after = await browser.submitForm(page, /\/login$/, { username: login, password: users[login]!.password });
      return [...hops, ...after];
    },
  };
}
