// `gatehouse dev`: a development OpenID provider, a demo app, and the
// sidecar in front of it, with zero configuration. With `--upstream`, your own
// app takes the demo's place: every path of it is protected, and its requests
// arrive with the identity headers of the development users.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { resolveAuthConfig } from '../core/config/auth-config.js';
import { isLoopbackHost } from '../core/http/request-view.js';
import { loginPath } from '../core/routes/login-paths.js';
import type { Logger } from '../logging.js';
import type { GatehouseCore } from '../native/types.js';
import { attach, createGateway } from '../sidecar/gateway.js';
import { listenEarly } from '../sidecar/listen.js';
import type { WebhookReceiver } from '../webhook/receiver.js';
import { startDemoApp } from './demo-app.js';
import { hostInUrl, startDevIdentityProvider } from './identity-provider.js';

export interface DevOptions {
  readonly host: string;
  readonly port: number;
  readonly core: GatehouseCore;
  readonly logger: Logger;
  readonly version: string;
  /** Your app's origin, in place of the demo app (every path protected). */
  readonly upstream?: string;
  /**
   * The name browsers reach this machine by, when gatehouse listens beyond loopback (default: the
   * address given, or this machine's first non-loopback IPv4 address for a wildcard).
   */
  readonly publicHost?: string;
}

export interface RunningDev {
  /** Where to open the demo in a browser (on this machine, or by the public host's name). */
  readonly url: string;
  /** Where gatehouse listens, when that is not a loopback address. */
  readonly listeningBeyondLoopback?: string;
  readonly issuer: string;
  /** The port of the development provider when it listens beyond loopback (gatehouse's port + 1, or any free one with --port 0). */
  readonly providerPortBeyondLoopback?: number;
  readonly receiver: WebhookReceiver;
  close(): Promise<void>;
}

/** A wildcard address (0.0.0.0, ::) is where a server listens, not an address a browser can be sent to. */
const WILDCARD_TO_LOOPBACK: Readonly<Record<string, string>> = { '0.0.0.0': '127.0.0.1', '[::]': '[::1]' };

/** A name browsers elsewhere can use for this machine: the address listened on, or for a wildcard the first non-loopback IPv4 address. */
function publicAddress(listeningHost: string): string {
  if (WILDCARD_TO_LOOPBACK[listeningHost] === undefined) return listeningHost;
  const external = Object.values(os.networkInterfaces())
    .flat()
    .find((address) => address !== undefined && address.family === 'IPv4' && !address.internal);
  return external?.address ?? '127.0.0.1';
}

export async function startDev(options: DevOptions): Promise<RunningDev> {
  const front = await listenEarly(options.host, options.port);
  const listening = new URL(front.url);
  const port = listening.port;
  const beyondLoopback = !isLoopbackHost(listening.hostname);
  const browserHost = beyondLoopback
    ? hostInUrl(options.publicHost ?? publicAddress(listening.hostname))
    : (WILDCARD_TO_LOOPBACK[listening.hostname] ?? listening.hostname);
  const browserOrigin = `http://${browserHost}:${port}`;
  // The provider accepts a callback only to an origin registered here: every name of this machine a
  // browser may use, and the address given with --host.
  const origins = [...new Set(['127.0.0.1', 'localhost', '[::1]', browserHost])].map(
    (host) => `http://${host}:${port}`,
  );
  const clientSecret = randomBytes(24).toString('base64url');
  // Beyond loopback, browsers on other machines (or the host of a container) must reach the provider
  // too: it listens where gatehouse does, on the next port (any free one when gatehouse was given
  // any: the next may well be taken), under the name they use for gatehouse.
  const providerPort = beyondLoopback && options.port !== 0 ? Number(port) + 1 : 0;
  const idp = await startDevIdentityProvider({
    ...(beyondLoopback
      ? { host: listening.hostname.replace(/^\[|\]$/g, ''), port: providerPort, publicHost: browserHost }
      : {}),
    clients: [
      {
        clientId: 'gatehouse-dev',
        clientSecret,
        redirectUris: origins.map((o) => `${o}/.auth/login/dev/callback`),
        postLogoutRedirectUris: origins.map((o) => `${o}/.auth/logout/complete`),
        // Where gatehouse listens: a sign-out at the provider (or a switch of account there) ends the session here too.
        backchannelLogoutUri: `${browserOrigin}/.auth/logout/backchannel/dev`,
      },
    ],
  });
  const app =
    options.upstream === undefined
      ? await startDemoApp(undefined, loginPath('/.auth', 'dev', '/', 'select_account'))
      : undefined;
  const { config } = resolveAuthConfig(
    {
      identityProviders: {
        customOpenIdConnectProviders: {
          dev: {
            registration: {
              clientId: 'gatehouse-dev',
              clientCredential: { clientSecretSettingName: 'GATEHOUSE_DEV_CLIENT_SECRET' },
              openIdConnectConfiguration: {
                wellKnownOpenIdConfiguration: `${idp.issuer}/.well-known/openid-configuration`,
              },
            },
            login: { nameClaimType: 'name', scopes: ['openid', 'profile', 'email', 'offline_access'] },
          },
        },
      },
      // The demo's public page; your own app is protected on every path.
      globalValidation: { excludedPaths: app !== undefined ? ['/public/*'] : [] },
      login: { tokenStore: { fileSystem: { directory: mkdtempSync(path.join(os.tmpdir(), 'gatehouse-dev-')) } } },
      gatehouse: { app: 'dev' },
    },
    { GATEHOUSE_DEV_CLIENT_SECRET: clientSecret },
  );
  const gateway = await createGateway({
    config,
    upstream: options.upstream ?? app!.url,
    core: options.core,
    logger: options.logger,
    masterKey: randomBytes(32),
    version: options.version,
  });
  attach(front, gateway);
  return {
    url: browserOrigin,
    ...(beyondLoopback
      ? { listeningBeyondLoopback: front.url, providerPortBeyondLoopback: Number(new URL(idp.issuer).port) }
      : {}),
    issuer: idp.issuer,
    receiver: gateway.receiver,
    close: async () => {
      gateway.close();
      await Promise.all([front.close(), idp.close(), app?.close()]);
    },
  };
}
