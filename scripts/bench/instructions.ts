// Instructions per request on each proxy's event-loop thread, counted by valgrind's
// callgrind: the sidecar benchmark's targets, warm, a fixed number of requests each.
// A count, not a time: it does not move with this shared machine's fast and slow
// phases, so a change of a few per cent in a proxy's own work shows, where the
// saturated throughput runs (±15 % between identical runs) cannot see it.
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import autocannon from 'autocannon';

import { bearerFixture } from './bearer.js';
import { table } from './measure.js';
import { benchDocument, signedInSession } from './sidecar.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const VALGRIND = '/usr/bin/valgrind';
const CALLGRIND_CONTROL = '/usr/bin/callgrind_control';
/** Under valgrind a request takes about fifty times longer: the session cache (30 s) is kept an hour instead. */
const SESSION_TTL_MS = 3_600_000;

interface Proxy {
  readonly child: ChildProcess;
  readonly port: number;
}

/** A sidecar-server.ts process; under callgrind with instrumentation off until counting starts (it runs much faster so). */
function forkServer(args: string[], outDir?: string): Promise<Proxy> {
  const env = { ...process.env, GATEHOUSE_BENCH_SESSION_TTL_MS: String(SESSION_TTL_MS) };
  const child = outDir
    ? fork(path.join(here, 'sidecar-server.ts'), args, {
        execPath: VALGRIND,
        // One output per thread: the event loop is thread 1; V8's compiler and GC helpers run beside it.
        execArgv: [
          '--tool=callgrind',
          '--instr-atstart=no',
          '--separate-threads=yes',
          `--callgrind-out-file=${outDir}/callgrind.%p`,
          process.execPath,
          '--import',
          'tsx',
        ],
        stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
        env,
      })
    : fork(path.join(here, 'sidecar-server.ts'), args, {
        execArgv: ['--import', 'tsx'],
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        env,
      });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, port: (m as { port: number }).port }));
    child.once('exit', (code) => reject(new Error(`${args[0]} exited ${code}`)));
  });
}

/** Instructions counted so far on one thread (1: the main thread) of a callgrind'ed process, from its dump. */
function threadInstructions(outDir: string, pid: number, thread: number): number {
  const suffix = `-${String(thread).padStart(2, '0')}`;
  const dumps = readdirSync(outDir).filter((file) => file.startsWith(`callgrind.${pid}.`) && file.endsWith(suffix));
  if (dumps.length === 0) throw new Error(`no callgrind dump of thread ${thread} of ${pid}`);
  return dumps.reduce((sum, file) => {
    const summary = /^summary: (\d+)/m.exec(readFileSync(path.join(outDir, file), 'utf8'));
    if (summary === null) throw new Error(`no summary line in ${file}`);
    return sum + Number(summary[1]);
  }, 0);
}

interface Counted {
  readonly instructionsPerRequest: number;
  readonly requests: number;
  readonly bad: number;
}

/** Warm the proxy up uncounted, then count the event-loop thread's instructions over `requests` requests. */
async function count(
  proxy: Proxy,
  outDir: string,
  headers: Record<string, string>,
  warmRequests: number,
  requests: number,
): Promise<Counted> {
  const pid = proxy.child.pid!;
  const load = (amount: number) =>
    autocannon({
      url: `http://127.0.0.1:${proxy.port}/page`,
      connections: 10,
      amount,
      headers: { ...headers, accept: 'text/html' },
    });
  const warm = await load(warmRequests);
  execFileSync(CALLGRIND_CONTROL, ['-i', 'on', String(pid)], { stdio: 'ignore' });
  const counted = await load(requests);
  execFileSync(CALLGRIND_CONTROL, ['-d', String(pid)], { stdio: 'ignore' });
  return {
    instructionsPerRequest: threadInstructions(outDir, pid, 1) / Math.max(1, counted.requests.total),
    requests: counted.requests.total,
    bad: warm.non2xx + warm.errors + counted.non2xx + counted.errors,
  };
}

export async function benchInstructions(quick: boolean): Promise<string> {
  if (!existsSync(VALGRIND) || !existsSync(CALLGRIND_CONTROL))
    return `(skipped: ${VALGRIND} not found; apt-get install valgrind)`;
  const warmRequests = quick ? 3000 : 8000;
  const requests = quick ? 500 : 2000;
  const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-store-'));
  const outDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-callgrind-'));
  const bearer = await bearerFixture('bench');
  const masterKey = randomBytes(32);
  const document = benchDocument(directory, bearer);
  const app = await forkServer(['app']);
  const upstream = `http://127.0.0.1:${app.port}`;
  const rows: Array<{ name: string; counted: Counted }> = [];
  try {
    const measure = async (
      name: string,
      args: string[],
      credentials: (port: number) => Promise<Record<string, string>>,
    ) => {
      const proxy = await forkServer(args, outDir);
      try {
        rows.push({ name, counted: await count(proxy, outDir, await credentials(proxy.port), warmRequests, requests) });
      } finally {
        proxy.child.kill('SIGKILL');
      }
    };
    const gatehouseArgs = ['gatehouse', upstream, JSON.stringify(document), masterKey.toString('hex')];
    // Sessions are bound to the host they were made on: each gatehouse process gets its own.
    const session = (port: number) => signedInSession(document, directory, masterKey, `127.0.0.1:${port}`);
    const { cookie, identityHeaders } = await session(40000); // any five-digit port: the same header bytes
    await measure('bare Koa + forwarder (baseline)', ['koa', upstream], async () => ({ cookie }));
    await measure(
      'Koa + forwarder + the same header bytes',
      ['koa-bytes', upstream, JSON.stringify(identityHeaders)],
      async () => ({ cookie }),
    );
    await measure('gatehouse (signed in)', gatehouseArgs, async (port) => ({ cookie: (await session(port)).cookie }));
    await measure('gatehouse (bearer token)', gatehouseArgs, async () => ({ authorization: `Bearer ${bearer.token}` }));
  } finally {
    app.child.kill();
    await bearer.close();
    rmSync(outDir, { recursive: true, force: true });
  }
  const base = rows[0]!.counted.instructionsPerRequest;
  return table(
    [
      'signed-in GET, 10 connections, warm (event-loop thread, callgrind)',
      'instructions/request',
      'vs baseline',
      'requests counted',
      'non-2xx',
    ],
    rows.map(({ name, counted }) => [
      name,
      `${(counted.instructionsPerRequest / 1000).toFixed(1)} k`,
      `${(counted.instructionsPerRequest / base).toFixed(3)}×`,
      String(counted.requests),
      String(counted.bad),
    ]),
  );
}
