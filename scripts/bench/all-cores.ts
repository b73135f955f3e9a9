// All cores, as deployed: a signed-in GET through each target with every process free to run on
// every CPU, the app, the load generator (wrk) and the target sharing the machine as they share
// one host. Targets, all in front of the same app and measured the same way in the same run:
// gatehouse serve as one process and as `--workers auto` (the filesystem store, and Redis),
// nginx asking `gatehouse serve --forward-auth --workers auto` (the shipped configuration, and
// the shipped caching one with gatehouse.verifyCache on), bare nginx proxy_pass, Apache httpd
// with mod_auth_openidc, and the app itself. Several rounds, the order rotated each round; the
// median of the rounds, ratios against the peers, and whether the targets below are met.
//
//   npx tsx scripts/bench/all-cores.ts            the full run (5 rounds of 10 s per target)
//   npx tsx scripts/bench/all-cores.ts --smoke    2 s per target, one round: checks that every
//                                                 target answers, its numbers mean nothing
import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { ensurePrograms } from '../test-requirements.mjs';
import { apacheMissing, startApache, type RunningApache } from './apache.js';
import { bearerFixture } from './bearer.js';
import { forkApp, startForwardAuthCli, startNginx } from './forward-auth.js';
import { judgedRequests } from './judged-requests.js';
import { table } from './measure.js';
import { cachedSite, shippedSite } from './nginx-examples.js';
import { redisMissing, startBenchRedis, type BenchRedis } from './redis.js';
import {
  benchDocument,
  cpuSeconds,
  freePort,
  machineTicks,
  redisSession,
  signedInSession,
  startGatehouseCli,
  stopChildren,
  waitForPort,
  withChildren,
} from './sidecar.js';
import { runWrk, WRK_REQUIREMENT, type WrkResult } from './wrk.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const NGINX = '/usr/sbin/nginx';
const TASKSET = '/usr/bin/taskset';
/** Every CPU of the machine (not this process' affinity, which an earlier section may have narrowed). */
const ALL_CPUS = os.cpus().length;
const CONNECTIONS = 50;

export interface AllCoresOptions {
  readonly seconds: number;
  readonly rounds: number;
  /**
   * Each target's warm-up, before the rounds: a Node process needs seconds of load before its
   * code is optimized (with --workers auto, the CPU per request settles only after about 8 s of
   * load), and nginx and Apache fill their connection pools.
   */
  readonly warmUpSeconds: number;
}

/** `npm run bench`'s lengths: the full run, and `--quick`. */
export const FULL_RUN: AllCoresOptions = { seconds: 10, rounds: 5, warmUpSeconds: 10 };
export const QUICK_RUN: AllCoresOptions = { seconds: 3, rounds: 2, warmUpSeconds: 2 };
/** Every target answers, nothing more: a few seconds each. */
export const SMOKE_RUN: AllCoresOptions = { seconds: 2, rounds: 1, warmUpSeconds: 1 };

interface Target {
  readonly name: string;
  readonly port: number;
  readonly headers: Record<string, string>;
  /** The processes that serve it (each with its descendants): their CPU time is the target's. */
  readonly pids: readonly number[];
  /** For nginx with kept answers: how many requests gatehouse has judged so far (its metrics). */
  readonly judged?: () => Promise<number>;
}

interface Measured extends WrkResult {
  /** CPU µs per request: the target's processes, the app. */
  readonly cpuMicros: number;
  readonly appCpuMicros: number;
  /** How busy the machine's CPUs were (1: every CPU all the time). */
  readonly machineBusy: number;
  /** Requests gatehouse judged during the run (a target with `judged`), else undefined. */
  readonly judged: number | undefined;
}

const APP = 'the app itself';
const BARE_NGINX = 'bare nginx proxy_pass';
const APACHE = 'Apache + mod_auth_openidc';
const NGINX_VERIFY = 'nginx + gatehouse /.auth/verify';
const NGINX_CACHED = 'nginx + /.auth/verify, answers kept';
const ONE = 'gatehouse, one process';
const WORKERS = 'gatehouse --workers auto';
const WORKERS_REDIS = 'gatehouse --workers auto + Redis';

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * What this run is held to: nginx keeping gatehouse's answers at 0.7× bare nginx's rate or more
 * and 2.5× Apache + mod_auth_openidc's; `--workers auto` at 0.6× Apache's CPU per request or less.
 */
const TARGETS = { cachedVsBare: 0.7, cachedVsApache: 2.5, workersCpuVsApache: 0.6 } as const;

/** Every process on every CPU: this one (wrk inherits it) and every one it started. */
function unpinAll(pids: readonly number[]): void {
  if (!existsSync(TASKSET)) return;
  for (const pid of new Set([process.pid, ...pids.flatMap(withChildren)]))
    execFileSync(TASKSET, ['-a', '-p', '-c', `0-${ALL_CPUS - 1}`, String(pid)], { stdio: 'ignore' });
}

async function load(target: Target, appPid: number, seconds: number): Promise<Measured> {
  const cpu = () => target.pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const judgedBefore = await target.judged?.();
  const before = { target: cpu(), app: cpuSeconds(appPid), machine: machineTicks() };
  const result = await runWrk({
    url: `http://127.0.0.1:${target.port}/page`,
    headers: target.headers,
    seconds,
    connections: CONNECTIONS,
    threads: ALL_CPUS,
  });
  const machine = machineTicks();
  const perRequest = (seconds: number) => (seconds * 1e6) / Math.max(1, result.total);
  const measured = {
    ...result,
    cpuMicros: perRequest(cpu() - before.target),
    appCpuMicros: perRequest(cpuSeconds(appPid) - before.app),
    machineBusy: (machine.busy - before.machine.busy) / (machine.all - before.machine.all),
  };
  const judgedAfter = await target.judged?.();
  return {
    ...measured,
    judged: judgedBefore === undefined || judgedAfter === undefined ? undefined : judgedAfter - judgedBefore,
  };
}

/** Why the run cannot be made here, or undefined. wrk is installed when it can be (as root with apt-get). */
function missing(): string | undefined {
  if (!existsSync(path.join(root, 'dist', 'cli.js'))) return 'dist/cli.js not found; npm run build:ts';
  if (!existsSync(NGINX)) return `${NGINX} not found; apt-get install nginx-light`;
  const notes: string[] = [];
  if (!ensurePrograms([WRK_REQUIREMENT], { context: 'npm run bench', log: (line) => notes.push(line) }))
    return notes.join(' ');
  return undefined;
}

export async function benchAllCores(options: AllCoresOptions): Promise<string> {
  const why = missing();
  if (why !== undefined) return `(skipped: ${why})`;
  const { seconds, rounds } = options;
  const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-all-cores-'));
  const bearer = await bearerFixture('bench');
  const masterKey = randomBytes(32);
  const document = benchDocument(directory, bearer);
  const cliEnv = { GATEHOUSE_ENCRYPTION_KEY: masterKey.toString('hex'), BENCH_SECRET: 'unused' };
  const processes: ChildProcess[] = [];
  const apacheNote = apacheMissing();
  const redisNote = redisMissing();
  let apache: RunningApache | undefined;
  let redis: BenchRedis | undefined;
  try {
    const app = await forkApp();
    processes.push(app.child);
    const upstream = `http://127.0.0.1:${app.port}`;
    const html = { accept: 'text/html' };
    const targets: Target[] = [{ name: APP, port: app.port, headers: html, pids: [app.child.pid!] }];

    const barePort = await freePort();
    const bare = await startNginx(
      barePort,
      `upstream app { server 127.0.0.1:${app.port}; keepalive 64; }
server { listen 127.0.0.1:${barePort}; location / { proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; } }
`,
      'auto',
    );
    processes.push(bare);
    targets.push({ name: BARE_NGINX, port: barePort, headers: html, pids: [bare.pid!] });

    if (apacheNote === undefined) {
      apache = await startApache(await freePort(), app.port, waitForPort);
      processes.push(apache.child);
      targets.push({
        name: APACHE,
        port: apache.port,
        headers: { ...html, cookie: apache.cookie },
        pids: [apache.child.pid!],
      });
    }

    // nginx with the shipped configuration, one worker per CPU, asking `gatehouse serve --forward-auth --workers auto`.
    const verifyPorts = { nginx: await freePort(), gatehouse: await freePort() };
    const verifier = await startForwardAuthCli(verifyPorts.gatehouse, document, masterKey, { workers: 'auto' });
    processes.push(verifier);
    const verifyNginx = await startNginx(
      verifyPorts.nginx,
      shippedSite(verifyPorts.nginx, verifyPorts.gatehouse, app.port),
      'auto',
    );
    processes.push(verifyNginx);
    // Sessions are bound to the host the browser uses: here nginx's address (X-Forwarded-Host).
    const verifySession = await signedInSession(document, directory, masterKey, `127.0.0.1:${verifyPorts.nginx}`);
    targets.push({
      name: NGINX_VERIFY,
      port: verifyPorts.nginx,
      headers: { ...html, cookie: verifySession.cookie },
      pids: [verifyNginx.pid!, verifier.pid!],
    });

    // The same with the shipped caching configuration and gatehouse.verifyCache on (its default
    // lifetime): gatehouse's metrics count the questions that reach it, to show the cache answers.
    const cachedPorts = { nginx: await freePort(), gatehouse: await freePort(), metrics: await freePort() };
    const cachedDocument = {
      ...document,
      gatehouse: { ...(document.gatehouse as Record<string, unknown>), verifyCache: {} },
    };
    const cachedVerifier = await startForwardAuthCli(cachedPorts.gatehouse, cachedDocument, masterKey, {
      workers: 'auto',
      metricsPort: cachedPorts.metrics,
    });
    processes.push(cachedVerifier);
    await waitForPort(cachedPorts.metrics);
    const cachedNginx = await startNginx(
      cachedPorts.nginx,
      cachedSite(cachedPorts.nginx, cachedPorts.gatehouse, app.port),
      'auto',
    );
    processes.push(cachedNginx);
    const cachedSession = await signedInSession(document, directory, masterKey, `127.0.0.1:${cachedPorts.nginx}`);
    targets.push({
      name: NGINX_CACHED,
      port: cachedPorts.nginx,
      headers: { ...html, cookie: cachedSession.cookie },
      pids: [cachedNginx.pid!, cachedVerifier.pid!],
      judged: () => judgedRequests(cachedPorts.metrics),
    });

    /** `gatehouse serve` from dist, signed in through a session in its store, bound to its address. */
    const gatehouse = async (name: string, workers: boolean, redisUrl?: string) => {
      const port = await freePort();
      const child = await startGatehouseCli({
        upstream,
        port,
        ...(workers ? { workers: 'auto' } : {}),
        document,
        env: { ...cliEnv, ...(redisUrl ? { GATEHOUSE_REDIS_URL: redisUrl } : {}) },
      });
      processes.push(child);
      const host = `127.0.0.1:${port}`;
      const cookie = redisUrl
        ? await redisSession(document, redisUrl, masterKey, host)
        : (await signedInSession(document, directory, masterKey, host)).cookie;
      targets.push({ name, port, headers: { ...html, cookie }, pids: [child.pid!] });
    };
    await gatehouse(ONE, false);
    await gatehouse(WORKERS, true);
    if (redisNote === undefined) {
      redis = await startBenchRedis(await freePort());
      await gatehouse(WORKERS_REDIS, true, redis.url);
    }

    unpinAll([...processes.map((child) => child.pid!), ...(redis ? [redis.child.pid!] : [])]);
    // Warm-up, and the check that every target answers each request with the app's 200 (signed in, not a redirect).
    for (const target of targets) {
      const warm = await load(target, app.child.pid!, options.warmUpSeconds);
      if (warm.bad > 0 || warm.total === 0)
        throw new Error(`${target.name}: did not answer 200 to every request (${warm.bad} of ${warm.total})`);
      // Kept answers must be what serves this target: gatehouse asked about a few requests a second, not each.
      if (warm.judged !== undefined && (warm.judged === 0 || warm.judged * 10 > warm.total))
        throw new Error(
          `${target.name}: gatehouse judged ${warm.judged} of ${warm.total} requests: nginx's cache is not answering`,
        );
    }
    const results = new Map<string, Measured[]>();
    for (let round = 0; round < rounds; round++) {
      // Rotated each round: on a machine whose speed drifts, a fixed order would favour whoever goes first.
      for (let i = 0; i < targets.length; i++) {
        const target = targets[(i + round) % targets.length]!;
        results.set(target.name, [...(results.get(target.name) ?? []), await load(target, app.child.pid!, seconds)]);
      }
    }
    return report(targets, results, { ...options, apacheNote, redisNote });
  } finally {
    await bearer.close();
    await stopChildren(processes);
    await apache?.close();
    await redis?.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

function report(
  targets: readonly Target[],
  results: ReadonlyMap<string, Measured[]>,
  run: AllCoresOptions & { apacheNote: string | undefined; redisNote: string | undefined },
): string {
  const summary = (name: string) => {
    const runs = results.get(name)!;
    return {
      rps: median(runs.map((r) => r.rps)),
      p50: median(runs.map((r) => r.p50)),
      p99: median(runs.map((r) => r.p99)),
      cpuMicros: median(runs.map((r) => r.cpuMicros)),
      appCpuMicros: median(runs.map((r) => r.appCpuMicros)),
      machineBusy: median(runs.map((r) => r.machineBusy)),
      bad: runs.reduce((sum, r) => sum + r.bad, 0),
    };
  };
  /** Per round, one target's req/s over another's in that round (the same phase of the machine): lowest–highest. */
  const rounds = (a: string, b: string) => {
    const ratios = results.get(a)!.map((m, i) => m.rps / results.get(b)![i]!.rps);
    return `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×`;
  };
  const has = (name: string) => results.has(name);
  const apache = has(APACHE) ? summary(APACHE) : undefined;
  const bare = summary(BARE_NGINX);
  const rendered = table(
    [
      `signed-in GET, wrk -t${ALL_CPUS} -c${CONNECTIONS}, median of ${run.rounds}×${run.seconds}s, every process on every CPU (${ALL_CPUS})`,
      'req/s',
      ...(apache ? ['vs Apache'] : []),
      'vs bare nginx',
      'p50 / p99',
      'CPU µs/request (target)',
      ...(apache ? ['CPU vs Apache'] : []),
      'app CPU µs/request',
      'CPUs busy',
      'non-2xx',
    ],
    targets.map(({ name }) => {
      const s = summary(name);
      return [
        name,
        s.rps.toFixed(0),
        ...(apache ? [`${(s.rps / apache.rps).toFixed(2)}×`] : []),
        `${(s.rps / bare.rps).toFixed(2)}×`,
        `${s.p50.toFixed(2)} / ${s.p99.toFixed(2)} ms`,
        name === APP ? '' : s.cpuMicros.toFixed(0),
        ...(apache ? [name === APP ? '' : `${(s.cpuMicros / apache.cpuMicros).toFixed(2)}×`] : []),
        s.appCpuMicros.toFixed(0),
        `${(s.machineBusy * 100).toFixed(0)} %`,
        String(s.bad),
      ];
    }),
  );
  const notes: string[] = [];
  if (apache) {
    for (const name of [ONE, WORKERS, WORKERS_REDIS, NGINX_VERIFY, NGINX_CACHED].filter(has)) {
      const s = summary(name);
      notes.push(
        `${name} against ${APACHE}: ${(s.rps / apache.rps).toFixed(2)}× the req/s (single rounds ${rounds(name, APACHE)}), ${(s.cpuMicros / apache.cpuMicros).toFixed(2)}× the CPU per request (${s.cpuMicros.toFixed(0)} µs against ${apache.cpuMicros.toFixed(0)} µs).`,
      );
    }
  } else notes.push(`(${APACHE} skipped: ${run.apacheNote})`);
  if (run.redisNote !== undefined) notes.push(`(${WORKERS_REDIS} skipped: ${run.redisNote})`);
  const cachedRuns = results.get(NGINX_CACHED)!;
  const judged = cachedRuns.reduce((sum, r) => sum + (r.judged ?? 0), 0);
  const served = cachedRuns.reduce((sum, r) => sum + r.total, 0);
  notes.push(
    `${NGINX_CACHED}: gatehouse judged ${judged} of its ${served} requests (${((judged / Math.max(1, served)) * 100).toFixed(2)} %, its metrics); nginx's cache answered the rest. One session on one URL: every request asks the same question, the cache's best case.`,
  );
  notes.push(
    `CPU per request is the target's whole process tree (nginx and gatehouse's verifier together; the cluster primary and its workers; Apache's processes); wrk, the app and the target share ${ALL_CPUS} CPUs, so every row's rate includes what the app and wrk took from it.`,
  );
  return `${rendered}\n\n${notes.join('\n')}\n\n${targetLines(summary, rounds, apache, bare).join('\n')}`;
}

/** The run's targets, each with its measured ratio and whether it is met. */
function targetLines(
  summary: (name: string) => { rps: number; cpuMicros: number },
  rounds: (a: string, b: string) => string,
  apache: { rps: number; cpuMicros: number } | undefined,
  bare: { rps: number },
): string[] {
  const verdict = (met: boolean) => (met ? 'met' : 'not met');
  const cached = summary(NGINX_CACHED);
  const lines = ['Targets:'];
  const vsBare = cached.rps / bare.rps;
  lines.push(
    `- ${NGINX_CACHED} ≥ ${TARGETS.cachedVsBare}× ${BARE_NGINX}'s req/s: ${vsBare.toFixed(2)}× (single rounds ${rounds(NGINX_CACHED, BARE_NGINX)}): ${verdict(vsBare >= TARGETS.cachedVsBare)}.`,
  );
  if (apache === undefined) {
    lines.push(`- the targets against ${APACHE}: not measured (skipped).`);
    return lines;
  }
  const vsApache = cached.rps / apache.rps;
  lines.push(
    `- ${NGINX_CACHED} ≥ ${TARGETS.cachedVsApache}× ${APACHE}'s req/s: ${vsApache.toFixed(2)}× (single rounds ${rounds(NGINX_CACHED, APACHE)}): ${verdict(vsApache >= TARGETS.cachedVsApache)}.`,
  );
  const cpu = summary(WORKERS).cpuMicros / apache.cpuMicros;
  lines.push(
    `- ${WORKERS}: CPU per request ≤ ${TARGETS.workersCpuVsApache}× ${APACHE}'s: ${cpu.toFixed(2)}×: ${verdict(cpu <= TARGETS.workersCpuVsApache)}.`,
  );
  return lines;
}

// `npx tsx scripts/bench/all-cores.ts [--smoke | --quick]`: this benchmark alone.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const options = process.argv.includes('--smoke')
    ? SMOKE_RUN
    : process.argv.includes('--quick')
      ? QUICK_RUN
      : FULL_RUN;
  console.log(
    `all cores — node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} × ${ALL_CPUS}, ${new Date().toISOString()}${options === SMOKE_RUN ? ' (smoke: the numbers mean nothing)' : ''}\n`,
  );
  console.log(await benchAllCores(options));
}
