// Two gatehouse instances behind one TCP balancer, sharing a token store, in
// front of one app and the test OpenID provider (rotating refresh tokens: a
// replaced one used again revokes the whole grant, as Auth0 and Okta do).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import { expect } from 'chai';

import { resolveAuthConfig } from '../../src/core/config/auth-config.js';
import { startDevIdentityProvider, type RunningIdentityProvider } from '../../src/dev/identity-provider.js';
import { createLogger, type Logger } from '../../src/logging.js';
import { loadAddonCore } from '../../src/native/index.js';
import { attach, createGateway, type Gateway } from '../../src/sidecar/gateway.js';
import { listenEarly, type Listening } from '../../src/sidecar/listen.js';
import { Browser } from './browser.js';
import { listen } from './http.js';
import { CLIENT_ID, defaultDocument } from './sign-in.js';

export type Instance = 'a' | 'b';

export interface Balancer {
  readonly url: string;
  /** The instances the next new connections go to, in order (else `a`). */
  route(...next: Instance[]): void;
  /** Cuts every connection through it: the next request of any client (a provider's kept-alive post) opens a new one, routed anew. */
  cutConnections(): void;
  close(): Promise<void>;
}

/** A TCP balancer: each new connection goes to the instance the test queued for it (else to `a`). */
async function startBalancer(targets: Record<Instance, number>): Promise<Balancer> {
  const queue: Instance[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targets[queue.shift() ?? 'a'], '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    route: (...next) => queue.push(...next),
    cutConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface InstancesOptions {
  /** The instances' environment (GATEHOUSE_REDIS_URL…); without it they share a token store directory. */
  readonly env?: Record<string, string>;
  /** Added to the default document (one provider "dev", /public/* excluded, the token store on). */
  readonly document?: Record<string, unknown>;
  readonly webhookSecret?: string;
  /** The provider posts logout tokens to the balancer's back-channel logout URL (to `a`, unless routed). */
  readonly backchannelLogout?: boolean;
  /** Each instance's logger (default: silent, or GATEHOUSE_TEST_LOG_LEVEL). */
  readonly logger?: (instance: Instance) => Logger;
}

export interface Instances {
  readonly balancer: Balancer;
  readonly idp: RunningIdentityProvider;
  readonly gateways: Record<Instance, Gateway>;
  /** Each instance's own address, past the balancer. */
  readonly urls: Record<Instance, string>;
  /** Refresh grants the provider has answered so far. */
  refreshGrants(): number;
  /** Holds the provider's token answers back this long, so that refreshes on two instances overlap. */
  delayTokenAnswers(ms: number): void;
  /** Signs in with every hop through instance `a`, which then holds the new session in its cache. */
  signedInThroughA(): Promise<Browser>;
  /** One request of `browser`'s through `instance`. */
  through(
    instance: Instance,
    browser: Browser,
    pathname: string,
    init?: { method?: string },
  ): ReturnType<Browser['request']>;
  close(): Promise<void>;
}

export async function startInstances(options: InstancesOptions = {}): Promise<Instances> {
  const closers: Array<() => unknown> = [];
  const app = await listen(
    http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ headers: req.headers }));
    }),
  );
  closers.push(() => app.close());
  const storeDirectory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-instances-'));
  closers.push(() => rmSync(storeDirectory, { recursive: true, force: true }));
  const masterKey = randomBytes(32);
  const fronts: Record<Instance, Listening> = {
    a: await listenEarly('127.0.0.1', 0),
    b: await listenEarly('127.0.0.1', 0),
  };
  const balancer = await startBalancer({
    a: Number(new URL(fronts.a.url).port),
    b: Number(new URL(fronts.b.url).port),
  });
  closers.push(() => balancer.close());
  const secret = randomBytes(16).toString('hex');
  let tokenDelayMs = 0;
  const idp = await startDevIdentityProvider({
    clients: [
      {
        clientId: CLIENT_ID,
        clientSecret: secret,
        redirectUris: [`${balancer.url}/.auth/login/dev/callback`],
        postLogoutRedirectUris: [`${balancer.url}/.auth/logout/complete`],
        ...(options.backchannelLogout
          ? {
              backchannelLogoutUri: `${balancer.url}/.auth/logout/backchannel/dev`,
              backchannelLogoutSessionRequired: true,
            }
          : {}),
      },
    ],
    rotateRefreshTokens: true,
    middleware: [
      async (ctx, next) => {
        if (tokenDelayMs > 0 && ctx.path === '/token') await delay(tokenDelayMs);
        await next();
      },
    ],
  });
  closers.push(() => idp.close());
  const document = {
    ...defaultDocument(idp.issuer),
    ...options.document,
    login: { tokenStore: { enabled: true, fileSystem: { directory: storeDirectory } } },
  };
  const gateways = {} as Record<Instance, Gateway>;
  for (const name of ['a', 'b'] as const) {
    const { config } = resolveAuthConfig(document, { TEST_CLIENT_SECRET: secret });
    const logger = options.logger?.(name) ?? createLogger(process.env.GATEHOUSE_TEST_LOG_LEVEL ?? 'silent');
    const gateway = await createGateway({
      config,
      upstream: app.url,
      core: loadAddonCore(),
      logger,
      masterKey,
      webhook: { ...(options.webhookSecret ? { secret: options.webhookSecret } : {}), env: {} },
      env: options.env ?? {},
    });
    attach(fronts[name], gateway);
    gateways[name] = gateway;
    closers.push(
      () => fronts[name].close(),
      () => gateway.close(),
    );
  }
  const through: Instances['through'] = (instance, browser, pathname, init) => {
    balancer.route(instance);
    return browser.request(`${balancer.url}${pathname}`, init);
  };
  return {
    balancer,
    idp,
    gateways,
    urls: { a: fronts.a.url, b: fronts.b.url },
    refreshGrants: () => idp.grants.get('refresh_token') ?? 0,
    delayTokenAnswers: (ms) => void (tokenDelayMs = ms),
    signedInThroughA: async () => {
      const browser = new Browser();
      const hops = await browser.follow(`${balancer.url}/protected`);
      const done = await browser.submitForm(hops.at(-1)!, /\/login$/, { username: 'demo', password: 'demo' });
      expect(done.at(-1)!.status, done.at(-1)!.body.slice(0, 200)).to.equal(200);
      expect(browser.cookie(balancer.url, 'PlatformAuthSession')).not.to.equal(undefined);
      return browser;
    },
    through,
    close: async () => {
      for (const close of closers.reverse()) await close();
    },
  };
}

/** The access token the app received, from the echoing app's answer (which must be a 200). */
export function forwardedAccessToken(reply: { status: number; body: string }): string {
  expect(reply.status, reply.body.slice(0, 200)).to.equal(200);
  return (JSON.parse(reply.body) as { headers: Record<string, string> }).headers['x-platform-token-dev-access-token']!;
}
