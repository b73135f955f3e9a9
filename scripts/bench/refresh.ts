// Refresh and logout latency through `gatehouse serve --workers auto` with the Redis token store.
// Every session is a real sign-in through gatehouse at a loopback OpenID provider (gatehouse's
// development provider, oidc-provider, in a process of its own) that issues refresh tokens, so
// each GET /.auth/refresh redeems a real refresh token at the provider's token endpoint
// (under the session's lock in Redis) and writes the new record to Redis; each GET /.auth/logout
// deletes the record in Redis and tells the other workers through pub/sub. Requests leave on a
// fixed schedule (open loop), each timed from its issue to the end of its answer.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import { SignInClient } from './apache.js';
import { table } from './measure.js';
import { percentile } from './paced.js';
import { redisMissing, startBenchRedis, type BenchRedis } from './redis.js';
import { freePort, startGatehouseCli } from './sidecar.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const ALIAS = 'bench';
const CLIENT_ID = 'gatehouse-bench';
const USER = { username: 'demo', password: 'demo' };
/** Requests per second of the refresh and logout runs. */
const RATE = 50;
/** Sign-ins under way at once while the sessions are made. */
const SIGN_IN_CONCURRENCY = 8;

/** The development provider in a process of its own (its work does not share the timing client's event loop). */
function startProvider(clients: unknown[]): Promise<{ child: ChildProcess; issuer: string }> {
  const child = fork(path.join(here, 'sidecar-server.ts'), ['idp', JSON.stringify(clients)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, issuer: (m as { issuer: string }).issuer }));
    child.once('exit', (code) => reject(new Error(`the OpenID provider exited ${code}`)));
  });
}

/** One OpenID provider, the development one: refresh tokens through `offline_access`; sessions in the token store. */
function refreshDocument(issuer: string): Record<string, unknown> {
  return {
    identityProviders: {
      customOpenIdConnectProviders: {
        [ALIAS]: {
          registration: {
            clientId: CLIENT_ID,
            clientCredential: { clientSecretSettingName: 'BENCH_SECRET' },
            openIdConnectConfiguration: { wellKnownOpenIdConfiguration: `${issuer}/.well-known/openid-configuration` },
          },
          login: { nameClaimType: 'name', scopes: ['openid', 'profile', 'email', 'offline_access'] },
        },
      },
    },
    login: { tokenStore: { enabled: true } },
    gatehouse: { app: 'bench-refresh' },
  };
}

/** Signs in through gatehouse: the page → the provider's sign-in form → the callback → the page again; the Cookie header it ends with. */
async function signIn(origin: string, issuer: string): Promise<string> {
  const client = new SignInClient();
  const toLogin = await client.follow(new URL('/page', origin));
  const loginPage = toLogin.at(-1)!;
  if (!loginPage.url.href.startsWith(issuer) || loginPage.status !== 200)
    throw new Error(
      `gatehouse did not lead to the provider's sign-in page: ${toLogin.map((h) => `${h.status} ${h.url.href}`).join(' → ')}`,
    );
  const action = /<form[^>]*action="([^"]*\/login)"/.exec(loginPage.body)?.[1];
  if (action === undefined) throw new Error(`no sign-in form at ${loginPage.url.href}`);
  const back = await client.follow(new URL(action.replace(/&amp;/g, '&'), loginPage.url), 'POST', USER);
  const page = back.at(-1)!;
  if (page.status !== 200 || page.url.origin !== origin)
    throw new Error(`the sign-in did not end on the page: ${back.map((h) => `${h.status} ${h.url.href}`).join(' → ')}`);
  return client.cookieHeader(origin);
}

interface Timed {
  /** Latencies in ms of the counted requests, ascending. */
  readonly latencies: Float64Array;
  /** Answers with another status than expected, or failed requests. */
  readonly unexpected: number;
}

/**
 * Sends `requests` (path and cookie) at RATE per second on one schedule whatever the answers, over
 * keep-alive connections, each timed from its issue to the end of its answer; the first
 * `uncounted` are sent but not timed (connection set-up).
 */
async function paced(
  port: number,
  requests: ReadonlyArray<{ path: string; cookie: string }>,
  expected: number,
  uncounted: number,
): Promise<Timed> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
  const latencies: number[] = [];
  let unexpected = 0;
  const began = performance.now();
  await Promise.all(
    requests.map(
      (request, i) =>
        new Promise<void>((resolve) => {
          const send = () => {
            const start = performance.now();
            const req = http.request(
              {
                host: '127.0.0.1',
                port,
                path: request.path,
                headers: { cookie: request.cookie, accept: 'application/json' },
                agent,
              },
              (res) => {
                res.resume();
                res.once('end', () => {
                  if (i >= uncounted) latencies.push(performance.now() - start);
                  if (res.statusCode !== expected) unexpected++;
                  resolve();
                });
              },
            );
            req.once('error', () => {
              unexpected++;
              resolve();
            });
            req.end();
          };
          setTimeout(send, Math.max(0, began + (i * 1000) / RATE - performance.now()));
        }),
    ),
  );
  agent.destroy();
  return { latencies: Float64Array.from(latencies).sort(), unexpected };
}

/** GET /page with each cookie: how many still reach the app (200) instead of being sent to sign in. */
async function stillSignedIn(port: number, cookies: readonly string[]): Promise<number> {
  let accepted = 0;
  for (const cookie of cookies) {
    const status = await new Promise<number>((resolve, reject) => {
      http
        .get(
          { host: '127.0.0.1', port, path: '/page', agent: false, headers: { cookie, accept: 'text/html' } },
          (res) => {
            res.resume();
            res.once('end', () => resolve(res.statusCode ?? 0));
          },
        )
        .once('error', reject);
    });
    if (status === 200) accepted++;
  }
  return accepted;
}

export async function benchRefreshLogout(quick: boolean): Promise<string> {
  const missing = redisMissing();
  if (missing !== undefined) return `(skipped: ${missing})`;
  const sessions = quick ? 20 : 300;
  const refreshes = quick ? 100 : 1500;
  const uncounted = RATE; // the first second
  const stop: Array<() => Promise<void> | void> = [];
  let redis: BenchRedis | undefined;
  try {
    redis = await startBenchRedis(await freePort());
    const app = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
    );
    app.listen(0, '127.0.0.1');
    await new Promise((resolve) => app.once('listening', resolve));
    stop.push(() => new Promise<void>((resolve) => app.close(() => resolve())));
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const secret = randomBytes(16).toString('hex');
    const idp = await startProvider([
      {
        clientId: CLIENT_ID,
        clientSecret: secret,
        redirectUris: [`${origin}/.auth/login/${ALIAS}/callback`],
        postLogoutRedirectUris: [`${origin}/.auth/logout/complete`],
      },
    ]);
    stop.push(() => void idp.child.kill());
    const gatehouse = await startGatehouseCli({
      upstream: `http://127.0.0.1:${(app.address() as AddressInfo).port}`,
      port,
      workers: 'auto',
      document: refreshDocument(idp.issuer),
      env: {
        GATEHOUSE_REDIS_URL: redis.url,
        GATEHOUSE_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
        BENCH_SECRET: secret,
      },
    });
    stop.push(
      () =>
        new Promise<void>((resolve) => {
          if (gatehouse.exitCode !== null || gatehouse.signalCode !== null) return resolve();
          const timer = setTimeout(() => gatehouse.kill('SIGKILL'), 5000);
          gatehouse.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          gatehouse.kill('SIGTERM');
        }),
    );
    // The sessions: real sign-ins, a few at a time (new connections each, as browsers).
    const cookies: string[] = [];
    for (let next = 0; next < sessions;) {
      const batch = Math.min(SIGN_IN_CONCURRENCY, sessions - next);
      cookies.push(...(await Promise.all(Array.from({ length: batch }, () => signIn(origin, idp.issuer)))));
      next += batch;
    }
    // Refresh: the sessions in turn, RATE per second (each session refreshed every sessions / RATE seconds).
    const refresh = await paced(
      port,
      Array.from({ length: refreshes + uncounted }, (_, i) => ({
        path: '/.auth/refresh',
        cookie: cookies[i % sessions]!,
      })),
      200,
      uncounted,
    );
    // Logout: each session once, RATE per second; none of them may reach the app afterwards.
    const logout = await paced(
      port,
      cookies.map((cookie) => ({ path: '/.auth/logout', cookie })),
      302,
      0,
    );
    const left = await stillSignedIn(port, cookies);
    const row = (name: string, t: Timed, expected: string) => [
      name,
      String(t.latencies.length),
      `${percentile(t.latencies, 50).toFixed(2)} ms`,
      `${percentile(t.latencies, 90).toFixed(2)} ms`,
      `${percentile(t.latencies, 99).toFixed(2)} ms`,
      `${t.latencies.at(-1)!.toFixed(2)} ms`,
      `${t.unexpected} (${expected})`,
    ];
    return [
      table(
        [
          `gatehouse --workers auto (${os.availableParallelism()}) + Redis store, ${sessions} sessions signed in at the development provider, ${RATE} req/s open loop`,
          'timed',
          'p50',
          'p90',
          'p99',
          'max',
          'other answers',
        ],
        [
          row('GET /.auth/refresh (refresh grant at the provider, record rewritten in Redis)', refresh, 'expected 200'),
          row('GET /.auth/logout (record deleted in Redis, workers told)', logout, 'expected 302'),
        ],
      ),
      '',
      `After the logouts, ${left} of the ${sessions} cookies still reached the app (expected 0).`,
    ].join('\n');
  } finally {
    for (const close of stop.reverse()) await close();
    await redis?.close();
  }
}
