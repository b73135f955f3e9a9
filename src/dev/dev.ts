// `gatehouse dev`: a development OpenID provider, a demo app, and the
// sidecar in front of it, with zero configuration.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { resolveAuthConfig } from '../core/config/auth-config.js';
import type { Logger } from '../logging.js';
import type { GatehouseCore } from '../native/types.js';
import { attach, createGateway } from '../sidecar/gateway.js';
import { listenEarly } from '../sidecar/listen.js';
import type { WebhookReceiver } from '../webhook/receiver.js';
import { startDemoApp } from './demo-app.js';
import { startDevIdentityProvider } from './identity-provider.js';

export interface DevOptions {
  readonly host: string;
  readonly port: number;
  readonly core: GatehouseCore;
  readonly logger: Logger;
  readonly version: string;
}

export interface RunningDev {
  readonly url: string;
  readonly issuer: string;
  readonly receiver: WebhookReceiver;
  close(): Promise<void>;
}

export async function startDev(options: DevOptions): Promise<RunningDev> {
  const front = await listenEarly(options.host, options.port);
  const port = new URL(front.url).port;
  const origins = [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
  const clientSecret = randomBytes(24).toString('base64url');
  const idp = await startDevIdentityProvider({
    clients: [
      {
        clientId: 'gatehouse-dev',
        clientSecret,
        redirectUris: origins.map((o) => `${o}/.auth/login/dev/callback`),
        postLogoutRedirectUris: origins.map((o) => `${o}/.auth/logout/complete`),
      },
    ],
  });
  const app = await startDemoApp();
  const { config } = resolveAuthConfig(
    {
      identityProviders: {
        customOpenIdConnectProviders: {
          dev: {
            registration: {
              clientId: 'gatehouse-dev',
              clientCredential: { clientSecretSettingName: 'GATEHOUSE_DEV_CLIENT_SECRET' },
              openIdConnectConfiguration: { wellKnownOpenIdConfiguration: `${idp.issuer}/.well-known/openid-configuration` },
            },
            login: { nameClaimType: 'name', scopes: ['openid', 'profile', 'email', 'offline_access'] },
          },
        },
      },
      globalValidation: { excludedPaths: ['/public/*'] },
      login: { tokenStore: { fileSystem: { directory: mkdtempSync(path.join(os.tmpdir(), 'gatehouse-dev-')) } } },
      gatehouse: { app: 'dev' },
    },
    { GATEHOUSE_DEV_CLIENT_SECRET: clientSecret },
  );
  const gateway = await createGateway({
    config,
    upstream: app.url,
    core: options.core,
    logger: options.logger,
    masterKey: randomBytes(32),
    version: options.version,
  });
  attach(front, gateway);
  return {
    url: front.url,
    issuer: idp.issuer,
    receiver: gateway.receiver,
    close: async () => {
      gateway.close();
      await Promise.all([front.close(), idp.close(), app.close()]);
    },
  };
}
