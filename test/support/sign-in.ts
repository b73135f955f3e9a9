// A whole deployment on loopback: a real OpenID provider (oidc-provider), an
// upstream app that echoes what it receives, and the gatehouse gateway.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, promises as fs } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import { resolveAuthConfig } from '../../src/core/config/auth-config.js';
import { startDevIdentityProvider, type RunningIdentityProvider } from '../../src/dev/identity-provider.js';
import type { GatehouseMetrics } from '../../src/metrics/gatehouse-metrics.js';
import { createLogger, type Logger } from '../../src/logging.js';
import { loadAddonCore } from '../../src/native/index.js';
import type { DownloadRate } from '../../src/sidecar/download-rate.js';
import { attach, createGateway, type Gateway } from '../../src/sidecar/gateway.js';
import { listenEarly, type Listening } from '../../src/sidecar/listen.js';
import { Browser, type Response } from './browser.js';
import { listen } from './http.js';

/** A gateway deployment whose provider is the test OpenID provider ("dev"). */
export interface Deployment extends GatewayDeployment {
  readonly idp: RunningIdentityProvider;
  readonly clientSecret: string;
}

export interface DeploymentOptions {
  /** The authsettingsV2 document; default: one provider "dev", /public/* excluded. */
  readonly document?: (issuer: string) => Record<string, unknown>;
  readonly accessTokenTtl?: number;
  /** Handles a request to the test provider before it does (shaping it like another provider); true when it answered. */
  readonly interceptProvider?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
  readonly upstreamHandler?: http.RequestListener;
  readonly upstreamTimeoutMs?: number;
  /** Connections to the app at most, and requests that may wait for one (the gateway's defaults otherwise). */
  readonly upstreamConnections?: number;
  readonly upstreamQueue?: number;
  readonly upstreamWebSockets?: number;
  /** The provider keeps its ID tokens thin: the claims come from its userinfo endpoint only. */
  readonly thinIdToken?: boolean;
  /** How long request headers may take to arrive (the server's default otherwise). */
  readonly headersTimeoutMs?: number;
  readonly authBodyDeadlineMs?: number;
  readonly sessionCacheTtlMs?: number;
  /** Where the gateway counts what it does (the metrics listener's registry). */
  readonly metrics?: GatehouseMetrics;
  /** The webhook receiver's secret (default: none, every delivery is a 500). */
  readonly webhookSecret?: string;
  /** How fast clients must read answers (default: the product's). */
  readonly downloadRate?: DownloadRate;
  /** Turns the access log on (default off, whatever GATEHOUSE_ACCESS_LOG says). */
  readonly accessLog?: boolean;
  /** Where the gateway logs (default: silent, or GATEHOUSE_TEST_LOG_LEVEL on stdout). */
  readonly logger?: Logger;
  /** Set up on the upstream server (e.g. a WebSocket handshake). */
  readonly upstreamSetup?: (server: http.Server) => void;
  /**
   * Register gatehouse's back-channel logout URL with the test provider (or `via(url)`, a URL that
   * passes the provider's posts on to it); `sessionRequired: false` has logout tokens name the user only.
   */
  readonly backchannelLogout?: {
    readonly sessionRequired?: boolean;
    readonly via?: (gatehouseUrl: string) => Promise<string>;
  };
}

export const CLIENT_ID = 'gatehouse-test';

/** One OpenID provider "dev" (the test provider), /public/* excluded. */
export function defaultDocument(issuer: string): Record<string, unknown> {
  return {
    identityProviders: {
      customOpenIdConnectProviders: {
        dev: {
          registration: {
            clientId: CLIENT_ID,
            clientCredential: { clientSecretSettingName: 'TEST_CLIENT_SECRET' },
            openIdConnectConfiguration: { wellKnownOpenIdConfiguration: `${issuer}/.well-known/openid-configuration` },
          },
          login: { nameClaimType: 'name', scopes: ['openid', 'profile', 'email', 'offline_access'] },
        },
      },
    },
    globalValidation: { excludedPaths: ['/public/*'] },
  };
}

export interface GatewayDeployment {
  readonly url: string;
  readonly gateway: Gateway;
  readonly upstream: { url: string; requests: Array<{ url: string; headers: http.IncomingHttpHeaders }> };
  readonly storeDirectory: string;
  /** The server gatehouse listens on, as `attach` configured it. */
  readonly server: http.Server;
  /** Stops the upstream app: its port refuses connections from then on. */
  closeUpstream(): Promise<void>;
  close(): Promise<void>;
}

export interface GatewayOptions extends Omit<DeploymentOptions, 'document'> {
  /** Called once gatehouse's address is known (callback URLs): the document and the environment its secrets come from. */
  readonly prepare: (
    frontUrl: string,
  ) => Promise<{ document: Record<string, unknown>; env: Record<string, string>; close?: () => Promise<void> }>;
}

/** An echoing upstream app behind gatehouse, configured by `prepare`. */
export async function startGatewayDeployment(options: GatewayOptions): Promise<GatewayDeployment> {
  const requests: Array<{ url: string; headers: http.IncomingHttpHeaders }> = [];
  const upstreamServer = http.createServer(
    options.upstreamHandler ??
      ((req, res) => {
        requests.push({ url: req.url ?? '', headers: req.headers });
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ url: req.url, headers: req.headers }));
      }),
  );
  options.upstreamSetup?.(upstreamServer);
  const upstream = await listen(upstreamServer);
  const front: Listening = await listenEarly(
    '127.0.0.1',
    0,
    options.headersTimeoutMs ? { headersTimeoutMs: options.headersTimeoutMs } : {},
  );
  const prepared = await options.prepare(front.url);
  const storeDirectory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-deploy-'));
  const document = prepared.document;
  const login = (document.login ?? {}) as { tokenStore?: object };
  const withStore = {
    ...document,
    login: { ...login, tokenStore: { ...login.tokenStore, fileSystem: { directory: storeDirectory } } },
  };
  const { config } = resolveAuthConfig(withStore, prepared.env);
  const gateway = await createGateway({
    config,
    upstream: upstream.url,
    core: loadAddonCore(),
    logger: options.logger ?? createLogger(process.env.GATEHOUSE_TEST_LOG_LEVEL ?? 'silent'),
    masterKey: randomBytes(32),
    webhook: { env: {}, ...(options.webhookSecret ? { secret: options.webhookSecret } : {}) },
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.downloadRate ? { downloadRate: options.downloadRate } : {}),
    ...(options.upstreamTimeoutMs ? { upstreamTimeoutMs: options.upstreamTimeoutMs } : {}),
    ...(options.upstreamConnections ? { upstreamConnections: options.upstreamConnections } : {}),
    ...(options.upstreamQueue !== undefined ? { upstreamQueue: options.upstreamQueue } : {}),
    ...(options.upstreamWebSockets !== undefined ? { upstreamWebSockets: options.upstreamWebSockets } : {}),
    ...(options.authBodyDeadlineMs ? { authBodyDeadlineMs: options.authBodyDeadlineMs } : {}),
    ...(options.sessionCacheTtlMs !== undefined ? { sessionCacheTtlMs: options.sessionCacheTtlMs } : {}),
    accessLog: options.accessLog ?? false,
  });
  attach(front, gateway);
  return {
    url: front.url,
    gateway,
    upstream: { url: upstream.url, requests },
    storeDirectory,
    server: front.server,
    closeUpstream: () => upstream.close(),
    close: async () => {
      gateway.close();
      await Promise.all([front.close(), prepared.close?.(), upstream.server.listening ? upstream.close() : undefined]);
    },
  };
}

/** The test OpenID provider ("dev") in front of an echoing app. */
export async function startDeployment(options: DeploymentOptions = {}): Promise<Deployment> {
  const secret = randomBytes(16).toString('hex');
  let idp: RunningIdentityProvider | undefined;
  const deployment = await startGatewayDeployment({
    ...options,
    prepare: async (frontUrl) => {
      const back = options.backchannelLogout;
      const backchannelUrl = `${frontUrl}/.auth/logout/backchannel/dev`;
      const backchannel =
        back === undefined
          ? {}
          : {
              backchannelLogoutUri: back.via ? await back.via(backchannelUrl) : backchannelUrl,
              backchannelLogoutSessionRequired: back.sessionRequired ?? true,
            };
      idp = await startDevIdentityProvider({
        clients: [
          {
            clientId: CLIENT_ID,
            clientSecret: secret,
            redirectUris: [`${frontUrl}/.auth/login/dev/callback`],
            postLogoutRedirectUris: [`${frontUrl}/.auth/logout/complete`],
            ...backchannel,
          },
        ],
        ...(options.interceptProvider ? { intercept: options.interceptProvider } : {}),
        ...(options.accessTokenTtl ? { accessTokenTtl: options.accessTokenTtl } : {}),
        ...(options.thinIdToken ? { thinIdToken: true } : {}),
      });
      return {
        document: options.document?.(idp.issuer) ?? defaultDocument(idp.issuer),
        env: { TEST_CLIENT_SECRET: secret },
        close: () => idp!.close(),
      };
    },
  });
  return { ...deployment, idp: idp!, clientSecret: secret };
}

/** Signs `browser` in through the provider's page; returns every hop from the protected page to its return. */
export async function signIn(
  browser: Browser,
  deployment: Deployment,
  pathname = '/protected',
  user = { username: 'demo', password: 'demo' },
): Promise<{ hops: Response[]; final: Response }> {
  const hops = await browser.follow(`${deployment.url}${pathname}`);
  const loginPage = hops.at(-1)!;
  if (!loginPage.url.startsWith(deployment.idp.issuer))
    throw new Error(`expected the provider's sign-in page, got ${loginPage.status} ${loginPage.url}`);
  const after = await browser.submitForm(loginPage, /\/login$/, user);
  return { hops: [...hops, ...after], final: after.at(-1)! };
}

/** The login transaction cookies `browser` holds for `url` (one per sign-in under way), name and value. */
export function pendingLogins(browser: Browser, url: string): Array<{ name: string; value: string }> {
  return browser
    .cookies(url)
    .filter((c) => c.name.startsWith('PlatformAuthSessionLogin_'))
    .map(({ name, value }) => ({ name, value }));
}

/** The session record files in a deployment's token store (full paths; one per stored session). */
export async function sessionRecordFiles(deployment: Pick<GatewayDeployment, 'storeDirectory'>): Promise<string[]> {
  const appDir = path.join(
    deployment.storeDirectory,
    (await fs.readdir(deployment.storeDirectory)).find((d) => d.startsWith('app-'))!,
  );
  return (await fs.readdir(appDir)).filter((f) => f.endsWith('.session')).map((f) => path.join(appDir, f));
}

/**
 * Makes the whole token store unusable: a file where the app's record directory was, so every
 * read fails with ENOTDIR (not a missing directory, which the store recreates), as a broken
 * mount would.
 */
export async function breakTokenStore(deployment: Pick<GatewayDeployment, 'storeDirectory'>): Promise<void> {
  const appDir = path.join(
    deployment.storeDirectory,
    (await fs.readdir(deployment.storeDirectory)).find((d) => d.startsWith('app-'))!,
  );
  await fs.rm(appDir, { recursive: true });
  await fs.writeFile(appDir, 'not a directory');
}

/** Makes every stored session unreadable: a directory where each record was, so reading fails with EISDIR, as a broken disk or mount would. */
export async function breakSessionRecords(deployment: Pick<GatewayDeployment, 'storeDirectory'>): Promise<void> {
  for (const file of await sessionRecordFiles(deployment)) {
    await fs.rm(file);
    await fs.mkdir(file);
  }
}
