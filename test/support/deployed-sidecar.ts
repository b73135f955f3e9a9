// What a test of gatehouse as deployed elsewhere (an installed package, a container image) sets up
// around it: a real OpenID provider with gatehouse registered as a client at `url`, and an app that
// records the headers it receives and greets the user gatehouse says it is.
import { randomBytes } from 'node:crypto';
import http from 'node:http';

import { startDevIdentityProvider, type RunningIdentityProvider } from '../../src/dev/identity-provider.js';
import { listen, type Listening } from './http.js';

export interface DeployedSurroundings {
  readonly idp: RunningIdentityProvider;
  readonly clientSecret: string;
  readonly app: Listening;
  /** The headers of every request the app received, in order. */
  readonly received: http.IncomingHttpHeaders[];
  /** An authsettingsV2 document for the provider, its secret read from `secretSetting`. */
  document(secretSetting: string, scopes: readonly string[]): Record<string, unknown>;
  close(): Promise<void>;
}

/** The provider (gatehouse, at `url`, registered as `clientId`) and the app. */
export async function startDeployedSurroundings(url: string, clientId: string): Promise<DeployedSurroundings> {
  const clientSecret = randomBytes(16).toString('hex');
  const idp = await startDevIdentityProvider({
    clients: [
      {
        clientId,
        clientSecret,
        redirectUris: [`${url}/.auth/login/dev/callback`],
        postLogoutRedirectUris: [`${url}/.auth/logout/complete`],
      },
    ],
  });
  const received: http.IncomingHttpHeaders[] = [];
  const app = await listen(
    http.createServer((req, res) => {
      received.push(req.headers);
      res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end(`hello ${req.headers['x-platform-client-principal-name'] ?? 'nobody'}`);
    }),
  );
  return {
    idp,
    clientSecret,
    app,
    received,
    document: (secretSetting, scopes) => ({
      identityProviders: {
        customOpenIdConnectProviders: {
          dev: {
            registration: {
              clientId,
              clientCredential: { clientSecretSettingName: secretSetting },
              openIdConnectConfiguration: {
                wellKnownOpenIdConfiguration: `${idp.issuer}/.well-known/openid-configuration`,
              },
            },
            login: { nameClaimType: 'name', scopes: [...scopes] },
          },
        },
      },
    }),
    close: async () => {
      await Promise.all([idp.close(), app.close()]);
    },
  };
}
