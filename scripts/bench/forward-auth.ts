// Forward authentication: a signed-in GET through nginx with the shipped configuration
// (examples/nginx/gatehouse.conf) asking gatehouse's verify endpoint (`gatehouse serve
// --forward-auth`, the compiled CLI), beside the same configuration asking a do-nothing Node
// verifier (a process of its own that answers 200 with the same identity header bytes and does
// nothing else: the ceiling of the design), bare nginx proxy_pass, the gatehouse sidecar and
// Apache httpd with mod_auth_openidc, all in front of the same app, in the same run. Each target
// is loaded in turn (autocannon, 50 connections), several rounds in a rotating order; the
// processes under test (nginx and its verifier, the sidecar, Apache) share CPU 1, the app and the
// load generator CPU 0. Reported: req/s and the CPU time per request of every process involved.
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import autocannon from 'autocannon';

import { apacheMissing, startApache, type RunningApache } from './apache.js';
import { bearerFixture } from './bearer.js';
import { table } from './measure.js';
import { shippedSite } from './nginx-examples.js';
import { benchDocument, freePort, signedInSession, startGatehouseCli, stopChildren, waitForPort } from './sidecar.js';
import { runWrk, wrkInstalled } from './wrk.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const NGINX = '/usr/sbin/nginx';
const TASKSET = '/usr/bin/taskset';
const CPUS = os.availableParallelism();
const canPin = CPUS >= 2 && existsSync(TASKSET);
const TICKS_PER_SECOND = 100;

/** A process of a target, by what it does ("nginx", "verifier", ...). */
interface Part {
  readonly role: string;
  readonly pid: number;
}

interface Target {
  readonly name: string;
  readonly port: number;
  readonly headers: Record<string, string>;
  /** The processes under test: loaded on CPU 1, their CPU time counted per request. */
  readonly parts: readonly Part[];
}

/** A process and its descendants (nginx's worker, Apache's children), from /proc. */
function tree(pid: number): number[] {
  const found = [pid];
  for (let i = 0; i < found.length; i++) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${found[i]}/task`);
    } catch {
      continue; // gone
    }
    for (const task of tasks) {
      try {
        for (const child of readFileSync(`/proc/${found[i]}/task/${task}/children`, 'utf8')
          .split(/\s+/)
          .filter(Boolean)
          .map(Number))
          if (!found.includes(child)) found.push(child);
      } catch {
        // a thread that ended meanwhile
      }
    }
  }
  return found;
}

/** User plus system CPU seconds of a process tree so far. */
function cpuSeconds(pid: number): number {
  let ticks = 0;
  for (const p of tree(pid)) {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone
    }
  }
  return ticks / TICKS_PER_SECOND;
}

function pin(pids: readonly number[], cpus: string): void {
  if (!canPin) return;
  for (const pid of new Set(pids.flatMap(tree)))
    execFileSync(TASKSET, ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

function started(child: ChildProcess, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error) => reject(new Error(`${what}: ${error.message}`)));
  });
}

/**
 * As root, nginx's workers would run as nobody, who cannot write in the benchmark's private
 * directory (where the cached configuration keeps its answers): they run as the benchmark's user.
 */
const ASSIGNED_USER = process.getuid?.() === 0 ? 'user root; ' : '';

/**
 * nginx with a configuration of its own (an http {} block's worth of `site`; given as a function,
 * it is told nginx's own directory, for paths nginx must write to), in a directory of its own;
 * `workers`: its worker_processes (one, or `auto`: one per CPU, as Debian's own configuration has it).
 */
export async function startNginx(
  port: number,
  site: string | ((directory: string) => string),
  workers: '1' | 'auto' = '1',
): Promise<ChildProcess> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-fa-nginx-'));
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(path.join(dir, sub));
  writeFileSync(path.join(dir, 'site.conf'), typeof site === 'string' ? site : site(dir));
  writeFileSync(
    path.join(dir, 'nginx.conf'),
    `daemon off; ${ASSIGNED_USER}worker_processes ${workers}; pid ${dir}/nginx.pid; error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  include ${dir}/site.conf;
}
`,
  );
  const child = spawn(NGINX, ['-e', `${dir}/error.log`, '-p', dir, '-c', path.join(dir, 'nginx.conf')], {
    stdio: 'ignore',
  });
  child.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  await started(child, 'nginx');
  await waitForPort(port);
  return child;
}

/**
 * The do-nothing verifier: node:http answering every request 200 with `headers` and an empty
 * body, nothing read, nothing checked. Written here, run as a process of its own.
 */
const DO_NOTHING = `
const http = require('node:http');
const headers = { ...JSON.parse(process.argv[1]), 'content-length': '0' };
const server = http.createServer((req, res) => res.writeHead(200, headers).end());
server.keepAliveTimeout = 60000;
server.listen(Number(process.argv[2]), '127.0.0.1');
`;

/** How `gatehouse serve --forward-auth` is started beyond its port and configuration. */
export interface ForwardAuthCliOptions {
  /** `--workers` (omitted: one process). */
  readonly workers?: string;
  /** `--metrics-port`: its Prometheus metrics on a listener of their own. */
  readonly metricsPort?: number;
}

/** `gatehouse serve --forward-auth` from dist, configured through the environment like a deployment. */
export function startForwardAuthCli(
  port: number,
  document: Record<string, unknown>,
  masterKey: Buffer,
  options: ForwardAuthCliOptions = {},
): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      path.join(root, 'dist', 'cli.js'),
      'serve',
      '--forward-auth',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      ...(options.workers ? ['--workers', options.workers] : []),
      ...(options.metricsPort ? ['--metrics-port', String(options.metricsPort)] : []),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        GATEHOUSE_LOG_LEVEL: 'warn',
        GATEHOUSE_AUTH_CONFIG_JSON: JSON.stringify(document),
        GATEHOUSE_ENCRYPTION_KEY: masterKey.toString('hex'),
        BENCH_SECRET: 'unused',
      },
    },
  );
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      if (output.length < 65_536) output += chunk.toString();
      if (output.includes('gatehouse listening on')) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`gatehouse serve --forward-auth exited ${code}: ${output.slice(-500)}`)),
    );
  });
}

/** The app of the benchmarks (sidecar-server.ts `app`), in a process of its own. */
export function forkApp(): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(path.join(here, 'sidecar-server.ts'), ['app'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, port: (m as { port: number }).port }));
    child.once('exit', (code) => reject(new Error(`app exited ${code}`)));
  });
}

interface Measured {
  readonly rps: number;
  readonly bad: number;
  /** CPU µs per request, per part's role, and the app's. */
  readonly cpu: Record<string, number>;
}

/** One saturated run: wrk (one thread, on CPU 0 with the app) when installed, else autocannon in this process. */
async function generate(target: Target, seconds: number): Promise<{ total: number; rps: number; bad: number }> {
  const url = `http://127.0.0.1:${target.port}/page`;
  if (!wrkInstalled()) {
    const result = await autocannon({ url, connections: 50, duration: seconds, headers: target.headers });
    return { total: result.requests.total, rps: result.requests.average, bad: result.non2xx + result.errors };
  }
  const prefix = canPin ? [TASKSET, '-c', '0'] : [];
  return runWrk({ url, headers: target.headers, seconds, connections: 50, threads: 1, prefix });
}

async function load(target: Target, app: Part, seconds: number): Promise<Measured> {
  const parts = [...target.parts, app];
  const before = parts.map((part) => cpuSeconds(part.pid));
  const result = await generate(target, seconds);
  const total = Math.max(1, result.total);
  const cpu = Object.fromEntries(
    parts.map((part, i) => [part.role, ((cpuSeconds(part.pid) - before[i]!) * 1e6) / total]),
  );
  return { rps: result.rps, bad: result.bad, cpu };
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const BARE = 'bare nginx proxy_pass';
const DO_NOTHING_TARGET = 'nginx + do-nothing Node verifier';
const VERIFY = 'nginx + gatehouse verify';
const SIDECAR = 'gatehouse sidecar';
const APACHE = 'Apache + mod_auth_openidc';

export async function benchForwardAuth(quick: boolean): Promise<string> {
  if (!existsSync(NGINX)) return `(skipped: ${NGINX} not found; apt-get install nginx-light)`;
  if (!existsSync(path.join(root, 'dist', 'cli.js'))) return '(skipped: dist/cli.js not found; npm run build:ts)';
  const seconds = quick ? 2 : 5;
  const rounds = quick ? 1 : 3;
  const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-fa-store-'));
  const bearer = await bearerFixture('bench');
  const masterKey = randomBytes(32);
  const document = benchDocument(directory, bearer);
  const processes: ChildProcess[] = [];
  const apacheNote = apacheMissing();
  let apache: RunningApache | undefined;
  try {
    const app = await forkApp();
    processes.push(app.child);
    const appPart: Part = { role: 'app', pid: app.child.pid! };

    const verifyPorts = { nginx: await freePort(), gatehouse: await freePort() };
    const gatehouse = await startForwardAuthCli(verifyPorts.gatehouse, document, masterKey);
    processes.push(gatehouse);
    const verifyNginx = await startNginx(
      verifyPorts.nginx,
      shippedSite(verifyPorts.nginx, verifyPorts.gatehouse, app.port),
    );
    processes.push(verifyNginx);
    // Bound to the host the browser uses: nginx's address (X-Forwarded-Host).
    const { cookie, identityHeaders } = await signedInSession(
      document,
      directory,
      masterKey,
      `127.0.0.1:${verifyPorts.nginx}`,
    );
    const answerHeaders = Object.fromEntries(
      Object.entries(identityHeaders).filter(([name]) => !name.startsWith('x-forwarded-')),
    );

    const nothingPorts = { nginx: await freePort(), verifier: await freePort() };
    const verifier = spawn(
      process.execPath,
      ['-e', DO_NOTHING, JSON.stringify(answerHeaders), String(nothingPorts.verifier)],
      { stdio: 'ignore' },
    );
    processes.push(verifier);
    await started(verifier, 'do-nothing verifier');
    await waitForPort(nothingPorts.verifier);
    const nothingNginx = await startNginx(
      nothingPorts.nginx,
      shippedSite(nothingPorts.nginx, nothingPorts.verifier, app.port),
    );
    processes.push(nothingNginx);

    const barePort = await freePort();
    const bareNginx = await startNginx(
      barePort,
      `upstream app { server 127.0.0.1:${app.port}; keepalive 64; }
server { listen 127.0.0.1:${barePort}; location / { proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; } }
`,
    );
    processes.push(bareNginx);

    const sidecarPort = await freePort();
    const sidecar = await startGatehouseCli({
      upstream: `http://127.0.0.1:${app.port}`,
      port: sidecarPort,
      document,
      env: { GATEHOUSE_ENCRYPTION_KEY: masterKey.toString('hex'), BENCH_SECRET: 'unused' },
    });
    processes.push(sidecar);
    const sidecarCookie = (await signedInSession(document, directory, masterKey, `127.0.0.1:${sidecarPort}`)).cookie;

    if (apacheNote === undefined) {
      apache = await startApache(await freePort(), app.port, waitForPort);
      processes.push(apache.child);
    }

    const html = { accept: 'text/html' };
    const targets: Target[] = [
      { name: BARE, port: barePort, headers: { ...html, cookie }, parts: [{ role: 'nginx', pid: bareNginx.pid! }] },
      {
        name: DO_NOTHING_TARGET,
        port: nothingPorts.nginx,
        headers: { ...html, cookie },
        parts: [
          { role: 'nginx', pid: nothingNginx.pid! },
          { role: 'verifier', pid: verifier.pid! },
        ],
      },
      {
        name: VERIFY,
        port: verifyPorts.nginx,
        headers: { ...html, cookie },
        parts: [
          { role: 'nginx', pid: verifyNginx.pid! },
          { role: 'verifier', pid: gatehouse.pid! },
        ],
      },
      {
        name: SIDECAR,
        port: sidecarPort,
        headers: { ...html, cookie: sidecarCookie },
        parts: [{ role: 'proxy', pid: sidecar.pid! }],
      },
      ...(apache
        ? [
            {
              name: APACHE,
              port: apache.port,
              headers: { ...html, cookie: apache.cookie },
              parts: [{ role: 'proxy', pid: apache.child.pid! }],
            },
          ]
        : []),
    ];
    const everyone = processes.map((child) => child.pid!);
    const measure = (target: Target, duration: number) => {
      const underTest = target.parts.map((part) => part.pid);
      pin([process.pid, ...everyone.filter((pid) => !underTest.includes(pid))], '0');
      pin(underTest, '1');
      return load(target, appPart, duration);
    };
    for (const target of targets) {
      // Warm-up, and the check that every target answers a signed-in request with the app's 200.
      if ((await measure(target, 1)).bad > 0)
        throw new Error(`${target.name}: did not answer 200 (signed in) to every request`);
    }
    const results = new Map<string, Measured[]>();
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < targets.length; i++) {
        const target = targets[(i + round) % targets.length]!;
        results.set(target.name, [...(results.get(target.name) ?? []), await measure(target, seconds)]);
      }
    }
    pin([process.pid, ...everyone], `0-${CPUS - 1}`);

    const summary = (name: string) => {
      const runs = results.get(name)!;
      const roles = Object.keys(runs[0]!.cpu);
      return {
        rps: median(runs.map((r) => r.rps)),
        bad: runs.reduce((sum, r) => sum + r.bad, 0),
        cpu: Object.fromEntries(roles.map((role) => [role, median(runs.map((r) => r.cpu[role]!))])),
      };
    };
    const bare = summary(BARE);
    const peer = apache ? summary(APACHE) : undefined;
    const µs = (value: number | undefined) => (value === undefined ? '' : value.toFixed(0));
    const generator = wrkInstalled() ? 'wrk -t1' : 'autocannon';
    const setup = `${generator}; ${canPin ? 'the processes under test on CPU 1, the app and the load generator on CPU 0' : 'no CPU pinning (needs two CPUs and taskset)'}`;
    const rendered = table(
      [
        `signed-in GET, 50 connections, median of ${rounds}×${seconds}s (${setup})`,
        'req/s',
        'vs bare nginx',
        ...(peer ? ['vs Apache'] : []),
        'nginx CPU µs/req',
        'verifier CPU µs/req',
        'sidecar / Apache CPU µs/req',
        'app CPU µs/req',
        'non-2xx',
      ],
      targets.map(({ name }) => {
        const s = summary(name);
        return [
          name,
          s.rps.toFixed(0),
          `${(s.rps / bare.rps).toFixed(2)}×`,
          ...(peer ? [`${(s.rps / peer.rps).toFixed(2)}×`] : []),
          µs(s.cpu.nginx),
          µs(s.cpu.verifier),
          µs(s.cpu.proxy),
          µs(s.cpu.app),
          String(s.bad),
        ];
      }),
    );
    const verify = summary(VERIFY);
    const nothing = summary(DO_NOTHING_TARGET);
    const perRound = results.get(VERIFY)!.map((m, i) => m.rps / results.get(DO_NOTHING_TARGET)![i]!.rps);
    const notes = [
      `gatehouse verify against the do-nothing verifier: ${(verify.rps / nothing.rps).toFixed(2)}× the req/s (single rounds ${Math.min(...perRound).toFixed(2)}–${Math.max(...perRound).toFixed(2)}×; target ≥ 0.7×); the verifier's CPU per request ${µs(verify.cpu.verifier)} µs against ${µs(nothing.cpu.verifier)} µs.`,
      `The subrequest's cost to nginx: ${µs(nothing.cpu.nginx)} µs per request with a verifier against ${µs(bare.cpu.nginx)} µs bare.`,
      peer
        ? `nginx + gatehouse verify against Apache + mod_auth_openidc: ${(verify.rps / peer.rps).toFixed(2)}× the req/s; the gatehouse sidecar ${(summary(SIDECAR).rps / peer.rps).toFixed(2)}×.`
        : `(${APACHE} skipped: ${apacheNote})`,
      'The shipped gatehouse.conf keeps no answer: every request is asked about (a logout is honoured at the next request); nginx keeping answers (gatehouse-cached.conf) is measured by the all-cores run.',
    ];
    return `${rendered}\n\n${notes.join('\n')}`;
  } finally {
    pin([process.pid], `0-${CPUS - 1}`);
    await bearer.close();
    await stopChildren(processes);
    await apache?.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

// `npx tsx scripts/bench/forward-auth.ts [--quick]`: this benchmark alone.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(
    `forward authentication — node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, ${new Date().toISOString()}\n`,
  );
  console.log(await benchForwardAuth(process.argv.includes('--quick')));
}
