// End-to-end signed deliveries per second over HTTP (8 KiB push), and peak
// memory for one 25 MiB delivery: gatehouse vs @octokit/webhooks, same
// payload, same load generator (autocannon), same run.
import { fork, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import autocannon from 'autocannon';

import { table } from './measure.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const SECRET = 'bench-secret-0123456789';

interface Started {
  child: ChildProcess;
  port: number;
}

function startReceiver(kind: string): Promise<Started> {
  const child = fork(path.join(here, 'receiver-server.ts'), [kind, SECRET], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, GATEHOUSE_LOG_LEVEL: 'info' },
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, port: (m as { port: number }).port }));
    child.once('exit', (code) => reject(new Error(`${kind} receiver exited ${code}`)));
  });
}

function stop(started: Started): Promise<void> {
  return new Promise((resolve) => {
    started.child.once('exit', () => resolve());
    started.child.send('exit');
  });
}

/** A push payload of exactly `size` bytes. */
export function pushPayload(size: number): Buffer {
  const base = {
    ref: 'refs/heads/main',
    repository: { full_name: 'octo/hello' },
    commits: [{ id: 'a', message: '' }],
    pad: '',
  };
  const skeleton = Buffer.byteLength(JSON.stringify(base));
  return Buffer.from(JSON.stringify({ ...base, pad: 'x'.repeat(size - skeleton) }));
}

function headersFor(body: Buffer): Record<string, string> {
  const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
  // Both header families on every request: one load for both receivers.
  // No X-Forge-Delivery, so gatehouse processes every request in full.
  return {
    'content-type': 'application/json',
    'x-forge-event': 'push',
    'x-forge-signature-256': signature,
    'x-github-event': 'push',
    'x-hub-signature-256': signature,
    'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
  };
}

async function load(
  port: number,
  body: Buffer,
  seconds: number,
): Promise<{ rps: number; p99: number; non2xx: number }> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/api/forge/webhook`,
    method: 'POST',
    headers: headersFor(body),
    body,
    connections: 10,
    duration: seconds,
  });
  return { rps: result.requests.average, p99: result.latency.p99, non2xx: result.non2xx + result.errors };
}

function post(port: number, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: '/api/forge/webhook', method: 'POST', headers: headersFor(body) },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function memory(started: Started): Promise<{ rssBefore: number; maxRss: number }> {
  return new Promise((resolve) => {
    started.child.once('message', (m) => resolve(m as { rssBefore: number; maxRss: number }));
    started.child.send('memory');
  });
}

const RECEIVERS = [
  ['octokit', '@octokit/webhooks createNodeMiddleware (baseline)'],
  ['gatehouse', 'gatehouse server (gatehouse serve)'],
  ['gatehouse-node', 'gatehouse createNodeHandler'],
  ['gatehouse-koa', 'gatehouse createKoaMiddleware in Koa'],
] as const;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * Each receiver in its own process, loaded in turn for several rounds (the
 * median counts), so slow phases of a shared machine hit all of them.
 */
export async function benchDeliveries(quick: boolean): Promise<string> {
  const seconds = quick ? 2 : 5;
  const rounds = quick ? 1 : 5;
  const body = pushPayload(8 * 1024);
  const rps = new Map<string, number[]>();
  const p99 = new Map<string, number[]>();
  const failures = new Map<string, number>();
  for (let round = 0; round < rounds; round++) {
    // Rotating order: on a machine whose speed drifts, a fixed order would favour whoever goes first.
    for (const [kind] of RECEIVERS.map((_, i) => RECEIVERS[(i + round) % RECEIVERS.length]!)) {
      const started = await startReceiver(kind);
      try {
        await load(started.port, body, 1); // warm-up
        const r = await load(started.port, body, seconds);
        rps.set(kind, [...(rps.get(kind) ?? []), r.rps]);
        p99.set(kind, [...(p99.get(kind) ?? []), r.p99]);
        failures.set(kind, (failures.get(kind) ?? 0) + r.non2xx);
      } finally {
        await stop(started);
      }
    }
  }
  const baseline = median(rps.get('octokit')!);
  const rows = RECEIVERS.map(([kind, label]) => {
    const r = median(rps.get(kind)!);
    return [
      label,
      r.toFixed(0),
      `${(r / baseline).toFixed(2)}×`,
      `${median(p99.get(kind)!)} ms`,
      String(failures.get(kind)),
    ];
  });
  return table(
    [`8 KiB signed push, 10 connections, median of ${rounds}×${seconds}s`, 'deliveries/s', 'ratio', 'p99', 'non-2xx'],
    rows,
  );
}

export async function benchMemory(): Promise<string> {
  const size = 25 * 1024 * 1024;
  const body = pushPayload(size);
  const rows: string[][] = [];
  for (const kind of ['octokit', 'gatehouse'] as const) {
    const started = await startReceiver(kind);
    try {
      const status = await post(started.port, body);
      const { rssBefore, maxRss } = await memory(started);
      const growth = maxRss - rssBefore;
      rows.push([kind, String(status), `${(growth / 2 ** 20).toFixed(1)} MiB`, `${(growth / size).toFixed(2)}×`]);
    } finally {
      await stop(started);
    }
  }
  return table(['one 25 MiB delivery', 'status', 'peak RSS growth', 'growth / body size'], rows);
}
