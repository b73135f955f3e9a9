// A signed-in GET through gatehouse, beside bare Koa with the same forwarder (the baseline),
// nginx proxy_pass (Debian's nginx), Apache httpd with mod_auth_openidc (its own
// sign-in, apache.ts) and the app itself, with one load generator (autocannon,
// 50 connections), in turn for several rounds.
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
import { identityFromRecord } from '../../src/core/principal.js';
import { fallbackCore } from '../../src/native/fallback.js';
import { apacheMissing, startApache, type RunningApache } from './apache.js';
import { bearerDocument, bearerFixture, type BearerFixture } from './bearer.js';
import { pacedLatency, percentile, pooled, type PacedResult } from './paced.js';
import { table } from './measure.js';
import { storeBenchSession } from './session.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const NGINX = '/usr/sbin/nginx';

interface Target {
  readonly name: string;
  readonly port: number;
  /** The process that does the proxying (for nginx and Apache, the parent: workers are its descendants). */
  readonly pid: number;
  /** Credentials to send (default: gatehouse's session cookie). */
  readonly credentials?: Record<string, string>;
  /** Must answer every request of its warm-up with a 2xx (a signed-in target: not a redirect to sign in). */
  readonly signedIn?: boolean;
}

/** A process and all its descendants (nginx's worker, Apache's child), from /proc: children of every thread, recursively. */
function withChildren(pid: number): number[] {
  const children = (p: number): number[] => {
    try {
      return readdirSync(`/proc/${p}/task`).flatMap((task) => readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
    } catch {
      return []; // gone, or no /proc children lists: the process alone
    }
  };
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...children(tree[i]!).filter((child) => !tree.includes(child)));
  return tree;
}

const TASKSET = '/usr/bin/taskset';
/** Whether the system under test can get a CPU of its own (two or more CPUs, and taskset). */
const canPin = os.availableParallelism() >= 2 && existsSync(TASKSET);

/**
 * Gives the target's process(es) CPU 1 and everything else (the app, the other proxies, this
 * process with the load generator) CPU 0, every thread included. Otherwise three busy processes
 * share two CPUs as the scheduler pleases, and a proxy's throughput depends on how much of
 * its CPU the app and the load generator happen to take (the same target varied by 2× between rounds).
 */
function pinFor(target: Target, everyone: readonly number[]): void {
  if (!canPin) return;
  const underTest = new Set(withChildren(target.pid));
  for (const pid of new Set([process.pid, ...everyone.flatMap(withChildren)])) setAffinity(pid, underTest.has(pid) ? '1' : '0');
}

/** Every process on every CPU again (the latency runs, below saturation, and whatever runs after). */
function unpin(everyone: readonly number[]): void {
  if (!canPin) return;
  for (const pid of new Set([process.pid, ...everyone.flatMap(withChildren)])) setAffinity(pid, `0-${os.availableParallelism() - 1}`);
}

function setAffinity(pid: number, cpus: string): void {
  execFileSync(TASKSET, ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/** CPU seconds (user + system) used so far by a process and its descendants (nginx's worker, Apache's child). */
function cpuSeconds(pid: number): number {
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
// USER_HZ: 100 on every Linux architecture node runs on.
const CLOCK_TICKS_PER_SECOND = 100;

function forkServer(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  // GATEHOUSE_BENCH_PROFILE=<dir>: CPU profiles of the gatehouse and koa-bytes processes, for finding hot spots.
  const profile = process.env.GATEHOUSE_BENCH_PROFILE && (args[0] === 'gatehouse' || args[0] === 'koa-bytes') ? ['--cpu-prof', `--cpu-prof-dir=${process.env.GATEHOUSE_BENCH_PROFILE}`] : [];
  const child = fork(path.join(here, 'sidecar-server.ts'), args, { execArgv: ['--import', 'tsx', ...profile], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, port: (m as { port: number }).port }));
    child.once('exit', (code) => reject(new Error(`${args[0]} exited ${code}`)));
  });
}

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

async function waitForPort(port: number): Promise<void> {
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
  return bearerDocument(bearer, { login: { tokenStore: { enabled: process.env.BENCH_TOKENS !== 'off', fileSystem: { directory } } }, gatehouse: { app: 'bench' } });
}

/** A signed-in session written straight into the store the gatehouse process reads. */
export async function signedInSession(document: Record<string, unknown>, directory: string, masterKey: Buffer, host: string): Promise<{ cookie: string; identityHeaders: Record<string, string> }> {
  const { config } = resolveAuthConfig(document, { BENCH_SECRET: 'unused' });
  const { record, cookie } = await storeBenchSession(config, new FileSystemTokenStore<SessionRecord>({ directory, app: config.app, masterKey }), masterKey, host);
  // The header bytes gatehouse adds for this session, for the Koa + forwarder + same-bytes target.
  const identity = identityFromRecord(record, config.tokenStore.enabled);
  const identityHeaders = Object.fromEntries(fallbackCore.normalizeHeaders([], identity, { prefix: config.headerPrefix }).set);
  Object.assign(identityHeaders, { 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'http', 'x-forwarded-host': host });
  return { cookie, identityHeaders };
}

/** One run of autocannon against a target, as fast as it answers; CPU per request of the target and of the app behind it. */
async function load(target: Target, appPid: number, cookie: string, seconds: number) {
  const cpuBefore = cpuSeconds(target.pid);
  const appBefore = cpuSeconds(appPid);
  const result = await autocannon({ url: `http://127.0.0.1:${target.port}/page`, connections: 50, duration: seconds, headers: { ...(target.credentials ?? { cookie }), accept: 'text/html' } });
  const perRequest = (cpu: number) => (cpu * 1e6) / Math.max(1, result.requests.total);
  return {
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
  try {
    const koa = await forkServer(['koa', upstream]);
    const gatehouse = await forkServer(['gatehouse', upstream, JSON.stringify(document), masterKey.toString('hex')]);
    // Sessions are bound to the host they were made on: this one to gatehouse's own address.
    const { cookie, identityHeaders } = await signedInSession(document, directory, masterKey, `127.0.0.1:${gatehouse.port}`);
    const koaBytes = await forkServer(['koa-bytes', upstream, JSON.stringify(identityHeaders)]);
    const nginx = await startNginx(app.port);
    processes.push(koa.child, gatehouse.child, koaBytes.child, nginx.child);
    if (apacheNote === undefined) {
      // Signed in once through Apache's own flow (apache.ts); its session cookie is all it is sent from then on.
      apache = await startApache(await freePort(), app.port, waitForPort);
      processes.push(apache.child);
    }
    const targets: Target[] = [
      { name: 'direct to the app', port: app.port, pid: app.child.pid! },
      { name: 'nginx proxy_pass', port: nginx.port, pid: nginx.child.pid! },
      ...(apache ? [{ name: APACHE_TARGET, port: apache.port, pid: apache.child.pid!, credentials: { cookie: apache.cookie }, signedIn: true }] : []),
      { name: BASELINE, port: koa.port, pid: koa.child.pid! },
      { name: 'Koa + forwarder + the same header bytes', port: koaBytes.port, pid: koaBytes.child.pid! },
      { name: GATEHOUSE_SIGNED_IN, port: gatehouse.port, pid: gatehouse.child.pid!, signedIn: true },
      { name: 'gatehouse (bearer token)', port: gatehouse.port, pid: gatehouse.child.pid!, credentials: { authorization: `Bearer ${bearer.token}` }, signedIn: true },
    ];
    const everyone = processes.map((child) => child.pid!);
    const appPid = app.child.pid!;
    /** A saturated run of one target, with the CPUs given out for it first. */
    const measure = (target: Target, duration: number) => {
      pinFor(target, everyone);
      return load(target, appPid, cookie, duration);
    };
    for (const target of targets) await measure(target, 1); // warm-up
    for (const target of targets.filter(({ signedIn }) => signedIn)) {
      if ((await measure(target, 1)).bad > 0) throw new Error(`${target.name}: did not answer 200 (signed in) to every request`);
    }
    const saturated = new Map<string, Measured[]>();
    for (let round = 0; round < rounds; round++) {
      // Rotate the order each round: on a machine whose speed drifts, a fixed order would favour whoever goes first.
      const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
      for (const target of order) saturated.set(target.name, [...(saturated.get(target.name) ?? []), await measure(target, seconds)]);
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
    const rate = Math.round(PACED_FRACTION * Math.min(...targets.map(({ name }) => median(saturated.get(name)!.map((x) => x.rps)))));
    const baseline = targets.find(({ name }) => name === BASELINE)!;
    const pacedTarget = (target: Target) => ({ url: `http://127.0.0.1:${target.port}/page`, headers: { ...(target.credentials ?? { cookie }), accept: 'text/html' } });
    /** Per target: its own latency, and the baseline's in the same moments. */
    const paced = new Map<string, Array<{ own: PacedResult; baseline: PacedResult }>>();
    const others = targets.filter((target) => target !== baseline);
    for (let round = 0; round < rounds; round++) {
      const order = others.map((_, i) => others[(i + round) % others.length]!);
      for (const target of order) {
        for (const warm of [baseline, target]) await load(warm, appPid, cookie, 1);
        // Who goes first on the shared schedule alternates by round: the client handles answers that
        // arrive together in issue order, so a fixed order would charge the second one its wait.
        const baselineFirst = round % 2 === 0;
        const pair = baselineFirst ? [pacedTarget(baseline), pacedTarget(target)] : [pacedTarget(target), pacedTarget(baseline)];
        const [first, second] = await pacedLatency(pair, { rate, seconds, settleSeconds: 1, connections: 50 });
        const [base, own] = baselineFirst ? [first, second] : [second, first];
        paced.set(target.name, [...(paced.get(target.name) ?? []), { own: own!, baseline: base! }]);
      }
    }
    // The baseline's own row: every time it ran beside another target.
    paced.set(BASELINE, [...paced.values()].flat().map(({ baseline: b }) => ({ own: b, baseline: b })));
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
        bad: r.reduce((a, x) => a + x.bad, 0) + p.reduce((a, x) => a + x.own.bad, 0),
      };
    };
    const base = summary(BASELINE);
    const peer = apache ? summary(APACHE_TARGET) : undefined;
    const setup = canPin ? 'saturated: the target alone on CPU 1, the rest on CPU 0' : 'no CPU pinning (needs two CPUs and taskset)';
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
        return [
          name,
          s.rps.toFixed(0),
          `${(s.rps / base.rps).toFixed(2)}×`,
          `${s.p50} / ${s.p99} ms`,
          `${s.pacedP50.toFixed(2)} / ${s.pacedP99.toFixed(2)} ms`,
          name === BASELINE ? '0.00 ms' : `${s.addedP99.toFixed(2)} ms (${s.roundsAdded[0].toFixed(1)} to ${s.roundsAdded[1].toFixed(1)})`,
          s.cpuMicros.toFixed(0),
          `${(s.cpuMicros / base.cpuMicros).toFixed(2)}×`,
          ...(peer ? [`${(s.rps / peer.rps).toFixed(2)}×`, `${(s.cpuMicros / peer.cpuMicros).toFixed(2)}×`] : []),
          s.appCpuMicros.toFixed(0),
          String(s.bad),
        ];
      }),
    );
    if (!peer) return `${measured}\n\n(${APACHE_TARGET} skipped: ${apacheNote})`;
    const ours = summary(GATEHOUSE_SIGNED_IN);
    return `${measured}\n\n${GATEHOUSE_SIGNED_IN} against ${APACHE_TARGET}: ${(ours.rps / peer.rps).toFixed(2)}× the req/s, ${(ours.cpuMicros / peer.cpuMicros).toFixed(2)}× the CPU per request (${ours.cpuMicros.toFixed(0)} µs against ${peer.cpuMicros.toFixed(0)} µs summed over Apache's ${withChildren(apache!.child.pid!).length} processes)`;
  } finally {
    // This process runs the benchmarks that follow: give it every CPU again.
    unpin([]);
    await bearer.close();
    // Ask politely first so profiles (if any) are written; nginx and Apache get SIGTERM.
    await Promise.all(
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
            else child.kill();
          }),
      ),
    );
    await apache?.close();
  }
}
