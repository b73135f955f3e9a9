// A signed-in GET through gatehouse, beside bare Koa with the same forwarder (the baseline),
// nginx proxy_pass (Debian's nginx), Apache httpd with mod_auth_openidc (its own
// sign-in, apache.ts) and the app itself, with one load generator (autocannon,
// 50 connections), in turn for several rounds. With Debian's redis-server (redis.ts), also
// gatehouse with the Redis token store, in one process and as `gatehouse serve --workers auto`
// (the compiled CLI: node:cluster workers sharing the port); the workers and a second Apache
// row run unpinned, on every CPU, since several workers cannot share one.
import { execFileSync, spawn, fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import autocannon from 'autocannon';

import { resolveAuthConfig } from '../../src/core/config/auth-config.js';
import type { SessionRecord } from '../../src/core/session/record.js';
import { FileSystemTokenStore } from '../../src/core/token-store/filesystem.js';
import { openRedisLink } from '../../src/core/token-store/redis-link.js';
import { redisKeyPrefix, redisSettings } from '../../src/core/token-store/redis-settings.js';
import { RedisTokenStore } from '../../src/core/token-store/redis.js';
import type { TokenStore } from '../../src/core/token-store/token-store.js';
import { createLogger } from '../../src/logging.js';
import { identityFromRecord } from '../../src/core/principal.js';
import { fallbackCore } from '../../src/native/fallback.js';
import { apacheMissing, startApache, type RunningApache } from './apache.js';
import { bearerDocument, bearerFixture, type BearerFixture } from './bearer.js';
import { pacedLatency, percentile, pooled, type PacedResult } from './paced.js';
import { table } from './measure.js';
import { redisMissing, startBenchRedis, type BenchRedis } from './redis.js';
import { storeBenchSession } from './session.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const NGINX = '/usr/sbin/nginx';

export interface Target {
  readonly name: string;
  readonly port: number;
  /** The process that does the proxying (for nginx and Apache, the parent: workers are its descendants). */
  readonly pid: number;
  /** Credentials to send (default: gatehouse's session cookie). */
  readonly credentials?: Record<string, string>;
  /** Must answer every request of its warm-up with a 2xx (a signed-in target: not a redirect to sign in). */
  readonly signedIn?: boolean;
  /** Saturated on every CPU, like everything else, instead of alone on CPU 1 (several workers cannot share one CPU). */
  readonly unpinned?: boolean;
  /** Its token store is the benchmark's Redis: Redis' commands and CPU are counted during its runs. */
  readonly redis?: boolean;
  /** The same server as this other target, measured saturated apart but not again in the latency runs (which are unpinned anyway). */
  readonly latencyAs?: string;
}

/** A process and all its descendants (nginx's worker, Apache's child), from /proc: children of every thread, recursively. */
export function withChildren(pid: number): number[] {
  const children = (p: number): number[] => {
    try {
      return readdirSync(`/proc/${p}/task`).flatMap((task) =>
        readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
      );
    } catch {
      return []; // gone, or no /proc children lists: the process alone
    }
  };
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...children(tree[i]!).filter((child) => !tree.includes(child)));
  return tree;
}

const TASKSET = '/usr/bin/taskset';
/**
 * The CPUs this process may use, read once at the start: os.availableParallelism() follows the
 * calling process' own affinity, so read while this process is pinned to CPU 0 it says 1 (and
 * "every CPU again" would have been CPU 0 alone).
 */
const CPUS = os.availableParallelism();
/** Whether the system under test can get a CPU of its own (two or more CPUs, and taskset). */
const canPin = CPUS >= 2 && existsSync(TASKSET);

/**
 * Gives the target's process(es) CPU 1 and everything else (the app, the other proxies, this
 * process with the load generator) CPU 0, every thread included. Otherwise three busy processes
 * share two CPUs as the scheduler pleases, and a proxy's throughput depends on how much of
 * its CPU the app and the load generator happen to take (the same target varied by 2× between rounds).
 */
export function pinFor(target: Target, everyone: readonly number[]): void {
  if (!canPin) return;
  if (target.unpinned) return unpin(everyone);
  const underTest = new Set(withChildren(target.pid));
  for (const pid of new Set([process.pid, ...everyone.flatMap(withChildren)]))
    setAffinity(pid, underTest.has(pid) ? '1' : '0');
}

/** Every process on every CPU again (the latency runs, below saturation, and whatever runs after). */
export function unpin(everyone: readonly number[]): void {
  if (!canPin) return;
  for (const pid of new Set([process.pid, ...everyone.flatMap(withChildren)])) setAffinity(pid, `0-${CPUS - 1}`);
}

function setAffinity(pid: number, cpus: string): void {
  execFileSync(TASKSET, ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/** CPU seconds (user + system) used so far by a process and its descendants (nginx's worker, Apache's child). */
export function cpuSeconds(pid: number): number {
  const ticks = (p: number): number => {
    try {
      // Fields after the ")" that ends the command name: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return Number(fields[11]) + Number(fields[12]);
    } catch {
      return 0;
    }
  };
  return withChildren(pid).reduce((sum, p) => sum + ticks(p), 0) / CLOCK_TICKS_PER_SECOND;
}
/** The machine's CPU ticks so far, busy and in all (the first line of /proc/stat; idle and iowait are not busy). */
export function machineTicks(): { busy: number; all: number } {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    const all = fields.reduce((a, b) => a + b, 0);
    return { busy: all - fields[3]! - fields[4]!, all };
  } catch {
    return { busy: Number.NaN, all: Number.NaN };
  }
}

/**
 * Stops the benchmark's processes and waits for each: a forked server is asked to exit (so a CPU
 * profile, if any, is written), any other gets SIGTERM; SIGKILL after 3 s.
 */
export function stopChildren(processes: readonly ChildProcess[]): Promise<void[]> {
  return Promise.all(
    processes.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve(); // gone already: no exit event to wait for
          const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          if (child.connected) child.send('exit');
          else child.kill('SIGTERM');
        }),
    ),
  );
}

// USER_HZ: 100 on every Linux architecture node runs on.
const CLOCK_TICKS_PER_SECOND = 100;

export function forkServer(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ child: ChildProcess; port: number }> {
  // GATEHOUSE_BENCH_PROFILE=<dir>: CPU profiles of the gatehouse and koa-bytes processes, for finding hot spots.
  const profile =
    process.env.GATEHOUSE_BENCH_PROFILE && (args[0] === 'gatehouse' || args[0] === 'koa-bytes')
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.GATEHOUSE_BENCH_PROFILE}`]
      : [];
  const child = fork(path.join(here, 'sidecar-server.ts'), args, {
    execArgv: ['--import', 'tsx', ...profile],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env,
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, port: (m as { port: number }).port }));
    child.once('exit', (code) => reject(new Error(`${args[0]} exited ${code}`)));
  });
}

export async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

export async function waitForPort(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listening on ${port}`);
}

async function startNginx(appPort: number): Promise<{ child: ChildProcess; port: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-nginx-'));
  for (const sub of ['cb', 'px', 'fc', 'uw', 'sc']) mkdirSync(path.join(dir, sub));
  const port = await freePort();
  writeFileSync(
    path.join(dir, 'nginx.conf'),
    `worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/cb; proxy_temp_path ${dir}/px; fastcgi_temp_path ${dir}/fc; uwsgi_temp_path ${dir}/uw; scgi_temp_path ${dir}/sc;
  upstream app { server 127.0.0.1:${appPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location / { proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
`,
  );
  const child = spawn(NGINX, ['-p', dir, '-c', path.join(dir, 'nginx.conf')], { stdio: 'ignore' });
  await waitForPort(port);
  return { child, port };
}

/**
 * The gatehouse configuration of the sidecar benchmarks: one OpenID provider whose keys sign the
 * fixture's bearer tokens, and the token store (its headers too) on, unless BENCH_TOKENS=off.
 */
export function benchDocument(directory: string, bearer: BearerFixture): Record<string, unknown> {
  // The provider is never contacted but for its keys: the session exists and its token is far from expiry.
  return bearerDocument(bearer, {
    login: { tokenStore: { enabled: process.env.BENCH_TOKENS !== 'off', fileSystem: { directory } } },
    gatehouse: { app: 'bench' },
  });
}

/** A signed-in session written straight into the store the gatehouse process reads (the filesystem store in `directory`, or a given store). */
export async function signedInSession(
  document: Record<string, unknown>,
  directory: string | TokenStore<SessionRecord>,
  masterKey: Buffer,
  host: string,
): Promise<{ cookie: string; identityHeaders: Record<string, string> }> {
  const { config } = resolveAuthConfig(document, { BENCH_SECRET: 'unused' });
  const store =
    typeof directory === 'string'
      ? new FileSystemTokenStore<SessionRecord>({ directory, app: config.app, masterKey })
      : directory;
  const { record, cookie } = await storeBenchSession(config, store, masterKey, host);
  // The header bytes gatehouse adds for this session, for the Koa + forwarder + same-bytes target.
  const identity = identityFromRecord(record, config.tokenStore.enabled);
  const identityHeaders = Object.fromEntries(
    fallbackCore.normalizeHeaders([], identity, { prefix: config.headerPrefix }).set,
  );
  Object.assign(identityHeaders, {
    'x-forwarded-for': '127.0.0.1',
    'x-forwarded-proto': 'http',
    'x-forwarded-host': host,
  });
  return { cookie, identityHeaders };
}

/**
 * A signed-in session written into Redis where gatehouse's runtime looks for it: the store kind
 * `session` under the runtime's key prefix for the app, sealed with the same master key.
 */
export async function redisSession(
  document: Record<string, unknown>,
  redisUrl: string,
  masterKey: Buffer,
  host: string,
): Promise<string> {
  const { config } = resolveAuthConfig(document, { BENCH_SECRET: 'unused' });
  // As the runtime reads them: the URL in GATEHOUSE_REDIS_URL, the prefix from the environment.
  const env = { ...process.env, GATEHOUSE_REDIS_URL: redisUrl };
  const link = await openRedisLink(redisSettings(env)!, redisKeyPrefix(config.app, env), createLogger('silent'));
  try {
    const store = new RedisTokenStore<SessionRecord>({ link, kind: 'session', app: config.app, masterKey });
    return (await storeBenchSession(config, store, masterKey, host)).cookie;
  } finally {
    await link.close();
  }
}

/** What `gatehouse serve` is started with by the benchmarks (the compiled CLI). */
export interface CliOptions {
  readonly upstream: string;
  readonly port: number;
  /** `--workers` (omitted: one process). */
  readonly workers?: string;
  readonly document: Record<string, unknown>;
  readonly env: Record<string, string>;
}

/**
 * `node dist/cli.js serve` as a deployment runs it, configured through the environment
 * (GATEHOUSE_AUTH_CONFIG_JSON and `env`), logging warnings only; resolves once it prints that it
 * listens (with --workers, the primary prints it once every worker listens).
 */
export function startGatehouseCli(options: CliOptions): Promise<ChildProcess> {
  const args = [
    path.join(here, '..', '..', 'dist', 'cli.js'),
    'serve',
    '--upstream',
    options.upstream,
    '--host',
    '127.0.0.1',
    '--port',
    String(options.port),
    ...(options.workers ? ['--workers', options.workers] : []),
  ];
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      GATEHOUSE_LOG_LEVEL: 'warn',
      ...options.env,
      GATEHOUSE_AUTH_CONFIG_JSON: JSON.stringify(options.document),
    },
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gatehouse serve did not say it listens within 20 s: ${output.slice(-500)}`));
    }, 20_000);
    const onData = (chunk: Buffer) => {
      if (output.length < 65_536) output += chunk.toString();
      if (output.includes('gatehouse listening on')) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData); // read on, so that a full pipe never blocks it
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gatehouse serve exited ${code}: ${output.slice(-500)}`));
    });
  });
}

/** One run of autocannon against a target, as fast as it answers; CPU per request of the target and of the app behind it. */
async function load(target: Target, appPid: number, cookie: string, seconds: number, redis?: BenchRedis) {
  const cpuBefore = cpuSeconds(target.pid);
  const appBefore = cpuSeconds(appPid);
  const counted = target.redis && redis ? redis : undefined;
  const redisBefore = counted
    ? { commands: await counted.commandsProcessed(), cpu: cpuSeconds(counted.child.pid!) }
    : undefined;
  const clientBefore = process.cpuUsage();
  const machineBefore = machineTicks();
  const result = await autocannon({
    url: `http://127.0.0.1:${target.port}/page`,
    connections: 50,
    duration: seconds,
    headers: { ...(target.credentials ?? { cookie }), accept: 'text/html' },
  });
  const perRequest = (cpu: number) => (cpu * 1e6) / Math.max(1, result.requests.total);
  const machineAfter = machineTicks();
  const client = process.cpuUsage(clientBefore);
  const redisCpu = counted ? cpuSeconds(counted.child.pid!) : 0;
  // The INFO that reads the count is a command too: one before, one after.
  const redisCommands =
    counted && redisBefore ? (await counted.commandsProcessed()) - redisBefore.commands - 1 : undefined;
  return {
    /** The load generator (this process) per request, and how busy the machine's CPUs were (1: every CPU all the time). */
    clientCpuMicros: (client.user + client.system) / Math.max(1, result.requests.total),
    machineBusy: (machineAfter.busy - machineBefore.busy) / (machineAfter.all - machineBefore.all),
    redisCommandsPerRequest:
      redisCommands === undefined ? undefined : redisCommands / Math.max(1, result.requests.total),
    redisCpuMicros: redisBefore ? perRequest(redisCpu - redisBefore.cpu) : undefined,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMicros: perRequest(cpuSeconds(target.pid) - cpuBefore),
    appCpuMicros: perRequest(cpuSeconds(appPid) - appBefore),
    bad: result.non2xx + result.errors,
  };
}

type Measured = Awaited<ReturnType<typeof load>>;
/**
 * The fixed rate of the latency runs, per target, as a fraction of the slowest target's saturated
 * throughput. Each target runs alongside the baseline at the same rate, so the machine carries twice this.
 */
const PACED_FRACTION = 0.125;
const BASELINE = 'bare Koa + forwarder (baseline)';
const APACHE_TARGET = 'Apache + mod_auth_openidc (signed in)';
const GATEHOUSE_SIGNED_IN = 'gatehouse (signed in)';
const GATEHOUSE_REDIS = 'gatehouse + Redis store (signed in)';
const APACHE_UNPINNED = 'Apache + mod_auth_openidc (signed in), unpinned';
const GATEHOUSE_UNPINNED = 'gatehouse (signed in), unpinned';
const WORKERS = 'auto';
const GATEHOUSE_WORKERS = `gatehouse --workers ${WORKERS} (${CPUS}) + Redis store (signed in), unpinned`;

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function benchSidecar(quick: boolean): Promise<string> {
  if (!existsSync(NGINX)) return `(skipped: ${NGINX} not found; apt-get install nginx-light)`;
  const seconds = quick ? 2 : 5;
  const rounds = quick ? 1 : 5;
  const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-store-'));
  const bearer = await bearerFixture('bench');
  const masterKey = randomBytes(32);
  const document = benchDocument(directory, bearer);
  const app = await forkServer(['app']);
  const upstream = `http://127.0.0.1:${app.port}`;
  const processes: ChildProcess[] = [app.child];
  // Apache + mod_auth_openidc, when Debian's packages are there; the other targets run either way.
  const apacheNote = apacheMissing();
  let apache: RunningApache | undefined;
  // Redis and the gatehouse rows that use it, when Debian's redis-server is there.
  const redisNote = redisMissing();
  let redis: BenchRedis | undefined;
  try {
    const koa = await forkServer(['koa', upstream]);
    const gatehouse = await forkServer(['gatehouse', upstream, JSON.stringify(document), masterKey.toString('hex')]);
    // Sessions are bound to the host they were made on: this one to gatehouse's own address.
    const { cookie, identityHeaders } = await signedInSession(
      document,
      directory,
      masterKey,
      `127.0.0.1:${gatehouse.port}`,
    );
    const koaBytes = await forkServer(['koa-bytes', upstream, JSON.stringify(identityHeaders)]);
    const nginx = await startNginx(app.port);
    processes.push(koa.child, gatehouse.child, koaBytes.child, nginx.child);
    if (apacheNote === undefined) {
      // Signed in once through Apache's own flow (apache.ts); its session cookie is all it is sent from then on.
      apache = await startApache(await freePort(), app.port, waitForPort);
      processes.push(apache.child);
    }
    const redisTargets: Target[] = [];
    if (redisNote === undefined) {
      redis = await startBenchRedis(await freePort());
      // The same configuration and master key; sessions in Redis instead of the directory.
      const redisEnv = { GATEHOUSE_REDIS_URL: redis.url };
      const single = await forkServer(['gatehouse', upstream, JSON.stringify(document), masterKey.toString('hex')], {
        ...process.env,
        ...redisEnv,
      });
      const workersPort = await freePort();
      const workers = await startGatehouseCli({
        upstream,
        port: workersPort,
        workers: WORKERS,
        document,
        env: { ...redisEnv, GATEHOUSE_ENCRYPTION_KEY: masterKey.toString('hex'), BENCH_SECRET: 'unused' },
      });
      processes.push(single.child, workers);
      // A session of its own for each (bound to the host it is used on), written into Redis as the runtime writes one.
      const singleCookie = await redisSession(document, redis.url, masterKey, `127.0.0.1:${single.port}`);
      const workersCookie = await redisSession(document, redis.url, masterKey, `127.0.0.1:${workersPort}`);
      redisTargets.push(
        {
          name: GATEHOUSE_REDIS,
          port: single.port,
          pid: single.child.pid!,
          credentials: { cookie: singleCookie },
          signedIn: true,
          redis: true,
        },
        {
          name: GATEHOUSE_WORKERS,
          port: workersPort,
          pid: workers.pid!,
          credentials: { cookie: workersCookie },
          signedIn: true,
          redis: true,
          unpinned: true,
        },
      );
    }
    const targets: Target[] = [
      { name: 'direct to the app', port: app.port, pid: app.child.pid! },
      { name: 'nginx proxy_pass', port: nginx.port, pid: nginx.child.pid! },
      ...(apache
        ? [
            {
              name: APACHE_TARGET,
              port: apache.port,
              pid: apache.child.pid!,
              credentials: { cookie: apache.cookie },
              signedIn: true,
            },
          ]
        : []),
      { name: BASELINE, port: koa.port, pid: koa.child.pid! },
      { name: 'Koa + forwarder + the same header bytes', port: koaBytes.port, pid: koaBytes.child.pid! },
      { name: GATEHOUSE_SIGNED_IN, port: gatehouse.port, pid: gatehouse.child.pid!, signedIn: true },
      {
        name: 'gatehouse (bearer token)',
        port: gatehouse.port,
        pid: gatehouse.child.pid!,
        credentials: { authorization: `Bearer ${bearer.token}` },
        signedIn: true,
      },
      ...redisTargets.slice(0, 1),
      // Several workers cannot be given one CPU: the multi-core comparison runs unpinned, Apache
      // (whose threads can use both CPUs too) and one gatehouse process alike, beside the workers.
      ...(redisTargets.length > 0 && apache
        ? [
            {
              name: APACHE_UNPINNED,
              port: apache.port,
              pid: apache.child.pid!,
              credentials: { cookie: apache.cookie },
              signedIn: true,
              unpinned: true,
              latencyAs: APACHE_TARGET,
            },
          ]
        : []),
      ...(redisTargets.length > 0
        ? [
            {
              name: GATEHOUSE_UNPINNED,
              port: gatehouse.port,
              pid: gatehouse.child.pid!,
              signedIn: true,
              unpinned: true,
              latencyAs: GATEHOUSE_SIGNED_IN,
            },
          ]
        : []),
      ...redisTargets.slice(1),
    ];
    const everyone = [...processes.map((child) => child.pid!), ...(redis ? [redis.child.pid!] : [])];
    const appPid = app.child.pid!;
    /** A saturated run of one target, with the CPUs given out for it first. */
    const measure = (target: Target, duration: number) => {
      pinFor(target, everyone);
      return load(target, appPid, cookie, duration, redis);
    };
    for (const target of targets) await measure(target, 1); // warm-up
    for (const target of targets.filter(({ signedIn }) => signedIn)) {
      if ((await measure(target, 1)).bad > 0)
        throw new Error(`${target.name}: did not answer 200 (signed in) to every request`);
    }
    const saturated = new Map<string, Measured[]>();
    for (let round = 0; round < rounds; round++) {
      // Rotate the order each round: on a machine whose speed drifts, a fixed order would favour whoever goes first.
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      for (const target of order)
        saturated.set(target.name, [...(saturated.get(target.name) ?? []), await measure(target, seconds)]);
    }
    // At saturation every Node proxy queues 50 connections on one event loop, so its latency is
    // just 50 / throughput. The added latency is measured apart: every target at the same fixed
    // rate, well below what the slowest of them sustains, by an open-loop client (paced.ts),
    // each target paired with the baseline in the same moments (their requests alternate), so
    // the added p99 compares two tails taken under the same conditions of this shared machine.
    // Each pairing follows a 1 s saturated burst on both: a target that sat idle while the
    // others ran has had its heap shrunk by V8's memory reducer and its upstream connections
    // closed by the app's keep-alive timeout, while the baseline (in every pairing) never idles;
    // measured cold, whichever gatehouse row ran first after the idle spell paid for that
    // (BENCHMARKS.md has the numbers). Each run's first second (new connections) is then not
    // counted either, and the rounds' samples are pooled: one 5 s round's p99 is its 15th-worst
    // request, which a single stall of this VM decides; the pooled p99 over every round is much
    // steadier. The spread over single rounds is reported beside it.
    // No pinning here: below saturation nothing competes for a CPU, and pinned, the client and the
    // app would queue behind each other on one CPU on every proxied request.
    unpin(everyone);
    const rate = Math.round(
      PACED_FRACTION *
        Math.min(
          ...targets
            .filter(({ latencyAs }) => latencyAs === undefined)
            .map(({ name }) => median(saturated.get(name)!.map((x) => x.rps))),
        ),
    );
    const baseline = targets.find(({ name }) => name === BASELINE)!;
    const pacedTarget = (target: Target) => ({
      url: `http://127.0.0.1:${target.port}/page`,
      headers: { ...(target.credentials ?? { cookie }), accept: 'text/html' },
    });
    /** Per target: its own latency, and the baseline's in the same moments. */
    const paced = new Map<string, Array<{ own: PacedResult; baseline: PacedResult }>>();
    const others = targets.filter((target) => target !== baseline && target.latencyAs === undefined);
    for (let round = 0; round < rounds; round++) {
      const order = others.map((_, i) => others[(i + round) % others.length]!);
      for (const target of order) {
        for (const warm of [baseline, target]) await load(warm, appPid, cookie, 1);
        // Who goes first on the shared schedule alternates by round: the client handles answers that
        // arrive together in issue order, so a fixed order would charge the second one its wait.
        const baselineFirst = round % 2 === 0;
        const pair = baselineFirst
          ? [pacedTarget(baseline), pacedTarget(target)]
          : [pacedTarget(target), pacedTarget(baseline)];
        const [first, second] = await pacedLatency(pair, { rate, seconds, settleSeconds: 1, connections: 50 });
        const [base, own] = baselineFirst ? [first, second] : [second, first];
        paced.set(target.name, [...(paced.get(target.name) ?? []), { own: own!, baseline: base! }]);
      }
    }
    // The baseline's own row: every time it ran beside another target.
    paced.set(
      BASELINE,
      [...paced.values()].flat().map(({ baseline: b }) => ({ own: b, baseline: b })),
    );
    for (const { name, latencyAs } of targets) if (latencyAs !== undefined) paced.set(name, paced.get(latencyAs)!);
    const summary = (name: string) => {
      const r = saturated.get(name)!;
      const p = paced.get(name)!;
      const own = pooled(p.map((x) => x.own));
      const alongside = pooled(p.map((x) => x.baseline));
      const perRound = p.map((x) => percentile(x.own.latencies, 99) - percentile(x.baseline.latencies, 99));
      return {
        rps: median(r.map((x) => x.rps)),
        p50: median(r.map((x) => x.p50)),
        p99: median(r.map((x) => x.p99)),
        pacedP50: percentile(own, 50),
        pacedP99: percentile(own, 99),
        addedP99: percentile(own, 99) - percentile(alongside, 99),
        roundsAdded: [Math.min(...perRound), Math.max(...perRound)] as const,
        cpuMicros: median(r.map((x) => x.cpuMicros)),
        appCpuMicros: median(r.map((x) => x.appCpuMicros)),
        clientCpuMicros: median(r.map((x) => x.clientCpuMicros)),
        machineBusy: median(r.map((x) => x.machineBusy)),
        redisCommands:
          r[0]?.redisCommandsPerRequest === undefined ? undefined : median(r.map((x) => x.redisCommandsPerRequest!)),
        redisCpuMicros: r[0]?.redisCpuMicros === undefined ? undefined : median(r.map((x) => x.redisCpuMicros!)),
        // A row measured at the fixed rate as another: that row's answers are counted there.
        bad:
          r.reduce((a, x) => a + x.bad, 0) +
          (targets.find((t) => t.name === name)!.latencyAs === undefined ? p.reduce((a, x) => a + x.own.bad, 0) : 0),
      };
    };
    /** Per round, a ratio of two targets' measurements taken in the same round (the same phase of the machine): the lowest and highest. */
    const roundRange = (a: string, b: string, pick: (m: Measured) => number): string => {
      const ratios = saturated.get(a)!.map((m, i) => pick(m) / pick(saturated.get(b)![i]!));
      return `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×`;
    };
    const base = summary(BASELINE);
    const peer = apache ? summary(APACHE_TARGET) : undefined;
    const setup = canPin
      ? 'saturated: the target alone on CPU 1, the rest on CPU 0'
      : 'no CPU pinning (needs two CPUs and taskset)';
    const measured = table(
      [
        `signed-in GET, 50 connections, median of ${rounds}×${seconds}s (${setup})`,
        'req/s',
        'vs baseline',
        'p50 / p99 saturated',
        `p50 / p99 at ${rate} req/s (rounds pooled)`,
        `p99 added at ${rate} req/s (the baseline alongside at the same rate; single rounds)`,
        'CPU µs/request (proxy process)',
        'CPU vs baseline',
        ...(peer ? ['req/s vs Apache', 'CPU vs Apache'] : []),
        'app CPU µs/request',
        'non-2xx',
      ],
      targets.map(({ name }) => {
        const s = summary(name);
        const latencyAs = targets.find((t) => t.name === name)!.latencyAs;
        return [
          name,
          s.rps.toFixed(0),
          `${(s.rps / base.rps).toFixed(2)}×`,
          `${s.p50} / ${s.p99} ms`,
          latencyAs !== undefined ? '(the row pinned)' : `${s.pacedP50.toFixed(2)} / ${s.pacedP99.toFixed(2)} ms`,
          latencyAs !== undefined
            ? ''
            : name === BASELINE
              ? '0.00 ms'
              : `${s.addedP99.toFixed(2)} ms (${s.roundsAdded[0].toFixed(1)} to ${s.roundsAdded[1].toFixed(1)})`,
          s.cpuMicros.toFixed(0),
          `${(s.cpuMicros / base.cpuMicros).toFixed(2)}×`,
          ...(peer ? [`${(s.rps / peer.rps).toFixed(2)}×`, `${(s.cpuMicros / peer.cpuMicros).toFixed(2)}×`] : []),
          s.appCpuMicros.toFixed(0),
          String(s.bad),
        ];
      }),
    );
    const notes: string[] = [];
    if (canPin && redisTargets.length > 0)
      notes.push(
        `Rows marked unpinned: saturated with every process (the target, the app, redis-server, the load generator) free to run on either CPU; CPU per request is summed over the target's whole process tree (gatehouse --workers: the primary and its ${CPUS} workers).`,
      );
    if (redisNote !== undefined) notes.push(`(Redis rows skipped: ${redisNote})`);
    if (peer) {
      const ours = summary(GATEHOUSE_SIGNED_IN);
      notes.push(
        `${GATEHOUSE_SIGNED_IN} against ${APACHE_TARGET}: ${(ours.rps / peer.rps).toFixed(2)}× the req/s, ${(ours.cpuMicros / peer.cpuMicros).toFixed(2)}× the CPU per request (${ours.cpuMicros.toFixed(0)} µs against ${peer.cpuMicros.toFixed(0)} µs summed over Apache's ${withChildren(apache!.child.pid!).length} processes)`,
      );
    } else notes.push(`(${APACHE_TARGET} skipped: ${apacheNote})`);
    if (redisTargets.length > 0) {
      const fs = summary(GATEHOUSE_SIGNED_IN);
      const rs = summary(GATEHOUSE_REDIS);
      const wk = summary(GATEHOUSE_WORKERS);
      const redisLine = (s: ReturnType<typeof summary>) =>
        `${s.redisCommands!.toFixed(4)} Redis commands and ${s.redisCpuMicros!.toFixed(1)} µs of redis-server CPU per request`;
      notes.push(
        `Redis store against the filesystem store, one process, pinned: ${(rs.cpuMicros / fs.cpuMicros).toFixed(3)}× the CPU per request (${rs.cpuMicros.toFixed(1)} µs against ${fs.cpuMicros.toFixed(1)} µs; ${((rs.cpuMicros / fs.cpuMicros - 1) * 100).toFixed(1)} %; single rounds ${roundRange(GATEHOUSE_REDIS, GATEHOUSE_SIGNED_IN, (m) => m.cpuMicros)}; target ≤ 1.05×), ${(rs.rps / fs.rps).toFixed(2)}× the req/s; ${redisLine(rs)}`,
      );
      const unpinnedOne = summary(GATEHOUSE_UNPINNED);
      notes.push(
        `${GATEHOUSE_WORKERS} against one process (filesystem store), both unpinned: ${(wk.rps / unpinnedOne.rps).toFixed(2)}× the req/s, ${(wk.cpuMicros / unpinnedOne.cpuMicros).toFixed(2)}× the CPU per request; ${redisLine(wk)}`,
      );
      if (peer) {
        const apacheAll = summary(APACHE_UNPINNED);
        notes.push(
          `${GATEHOUSE_WORKERS} against ${APACHE_UNPINNED}: ${(wk.rps / apacheAll.rps).toFixed(2)}× the req/s (${wk.rps.toFixed(0)} against ${apacheAll.rps.toFixed(0)}; single rounds ${roundRange(GATEHOUSE_WORKERS, APACHE_UNPINNED, (m) => m.rps)}; target ≥ 1.5×), ${(wk.cpuMicros / apacheAll.cpuMicros).toFixed(2)}× the CPU per request (${wk.cpuMicros.toFixed(0)} µs against ${apacheAll.cpuMicros.toFixed(0)} µs)`,
        );
      }
      // Where the CPUs went in the unpinned runs: the target, the app and the load generator share them.
      const spent = (name: string) => {
        const s = summary(name);
        return `${name}: CPUs ${(s.machineBusy * 100).toFixed(0)} % busy; per request ${s.cpuMicros.toFixed(0)} µs target, ${s.appCpuMicros.toFixed(0)} µs app, ${s.clientCpuMicros.toFixed(0)} µs load generator`;
      };
      notes.push(
        `Unpinned runs, where the CPU time went (median of the rounds):\n${targets
          .filter((t) => t.unpinned)
          .map((t) => `- ${spent(t.name)}`)
          .join('\n')}`,
      );
    }
    return `${measured}\n\n${notes.join('\n\n')}`;
  } finally {
    // This process runs the benchmarks that follow: give it every CPU again.
    unpin([]);
    await bearer.close();
    await stopChildren(processes);
    await apache?.close();
    await redis?.close();
  }
}
