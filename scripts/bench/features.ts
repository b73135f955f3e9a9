// The optional features' cost over HTTP: a signed-in GET through one gatehouse process (the
// compiled package, as the sidecar benchmarks run it) with no feature on, under five
// authorization rules (the request passes four path rules by and the default lets it in), and
// with the signed identity assertion on. Each gatehouse is pinned to a CPU of its own in turn
// (the app and the load generator on the other), rounds rotated, medians; the targets are CPU per
// request at most 1.05× the plain one's.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import autocannon from 'autocannon';

import { FIVE_RULES } from './authorization.js';
import { bearerFixture } from './bearer.js';
import { table } from './measure.js';
import { benchDocument, cpuSeconds, forkServer, pinFor, signedInSession, stopChildren, unpin } from './sidecar.js';

interface Variant {
  readonly name: string;
  readonly gatehouse: Record<string, unknown>;
}

interface Running extends Variant {
  readonly port: number;
  readonly pid: number;
  readonly cookie: string;
}

const PLAIN = 'no feature on';
const VARIANTS: readonly Variant[] = [
  { name: PLAIN, gatehouse: {} },
  { name: 'five authorization rules', gatehouse: { authorization: FIVE_RULES } },
  { name: 'identity assertion on', gatehouse: { identityAssertion: {} } },
];

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function benchFeatures(quick: boolean): Promise<string> {
  const seconds = quick ? 2 : 5;
  const rounds = quick ? 1 : 5;
  const bearer = await bearerFixture('bench');
  const masterKey = randomBytes(32);
  const app = await forkServer(['app']);
  const upstream = `http://127.0.0.1:${app.port}`;
  const processes = [app.child];
  try {
    const targets: Running[] = [];
    for (const variant of VARIANTS) {
      const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-features-bench-'));
      const document = benchDocument(directory, bearer);
      document.gatehouse = { ...(document.gatehouse as object), ...variant.gatehouse };
      const server = await forkServer(['gatehouse', upstream, JSON.stringify(document), masterKey.toString('hex')]);
      processes.push(server.child);
      const host = `127.0.0.1:${server.port}`;
      const { cookie } = await signedInSession(document, directory, masterKey, host);
      targets.push({ ...variant, port: server.port, pid: server.child.pid!, cookie });
    }
    const everyone = processes.map((child) => child.pid!);
    const load = async (target: Running, duration: number) => {
      const before = cpuSeconds(target.pid);
      const result = await autocannon({
        url: `http://127.0.0.1:${target.port}/page`,
        connections: 50,
        duration,
        headers: { cookie: target.cookie, accept: 'text/html' },
      });
      const bad = result.non2xx + result.errors;
      if (bad > 0) throw new Error(`${target.name}: ${bad} of ${result.requests.total} requests were not let in`);
      return {
        rps: result.requests.average,
        cpuMicros: ((cpuSeconds(target.pid) - before) * 1e6) / Math.max(1, result.requests.total),
      };
    };
    const results = new Map<string, Array<{ rps: number; cpuMicros: number }>>();
    for (const target of targets) {
      pinFor({ name: target.name, port: target.port, pid: target.pid }, everyone);
      // Warm-up (a process's first seconds cost several times its settled CPU), and the check that every request is let in.
      await load(target, quick ? 1 : 5);
    }
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < targets.length; i++) {
        const target = targets[(i + round) % targets.length]!;
        pinFor({ name: target.name, port: target.port, pid: target.pid }, everyone);
        results.set(target.name, [...(results.get(target.name) ?? []), await load(target, seconds)]);
      }
    }
    unpin(everyone);
    const plainCpu = median(results.get(PLAIN)!.map((r) => r.cpuMicros));
    const rows = targets.map((target) => {
      const measured = results.get(target.name)!;
      const cpu = median(measured.map((r) => r.cpuMicros));
      return [
        target.name,
        String(Math.round(median(measured.map((r) => r.rps)))),
        `${cpu.toFixed(1)} µs`,
        `${(cpu / plainCpu).toFixed(3)}×`,
      ];
    });
    return table(
      [
        `signed-in GET through one gatehouse, pinned, median of ${rounds}×${seconds}s`,
        'req/s',
        'CPU per request',
        'CPU vs no feature (target ≤ 1.05×)',
      ],
      rows,
    );
  } finally {
    await stopChildren(processes);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await benchFeatures(process.argv.includes('--quick')));
  process.exit(0); // autocannon's and the forks' handles would keep it alive
}
