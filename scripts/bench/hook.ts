// The in-server path: decisions per second and p99 through the interception
// hook (native threads of the module host → the module's engine slot → C ABI
// engine → thread-safe function → the auth core in JavaScript → back) at 1, 8 and 64 native threads, beside the
// sidecar's own per-request work for the same signed-in request (AuthLayer
// decide + the forwarded-header build, in process), same run.
import { performance } from 'node:perf_hooks';

import type { RequestView } from '../../dist/core/http/request-view.js';
import { inServerPolicy, type NativeRequest } from '../../dist/inserver/policy.js';
import { createInterceptor } from '../../dist/native/interceptor.js';
import { loadModuleHost } from '../../dist/native/module-host.js';
import { forwardHeaders } from '../../dist/sidecar/app.js';
import { HOST, signedInLayer } from './core-path.js';
import { formatRate, table, threadCpuNs } from './measure.js';

/** The interceptor's crossing counters (undefined on a build without them). */
const stats = (interceptor: object) =>
  (interceptor as { crossingStats?: () => { batches: number; requests: number } }).crossingStats?.();

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;

export async function benchHook(quick: boolean): Promise<string> {
  const { layer, cookie } = await signedInLayer({});
  const headers: Array<[string, string]> = [
    ['Host', HOST],
    ['Accept', 'text/html'],
    ['Cookie', cookie],
    ['User-Agent', 'bench'],
  ];
  const request: NativeRequest = {
    method: 'GET',
    scheme: 'http',
    host: HOST,
    path: '/page',
    query: '',
    remoteAddress: '127.0.0.1',
    headers,
  };

  // The sidecar's work for the same request, in process: decide, then the forwarded-header build.
  const nodeHeaders = Object.fromEntries(headers.map(([n, v]) => [n.toLowerCase(), v]));
  const view = (): RequestView => ({
    method: 'GET',
    path: '/page',
    query: '',
    headers: headers.map(([n, v]) => [n, v] as const),
    scheme: 'http',
    host: HOST,
    remoteAddress: '127.0.0.1',
    readBody: async () => Buffer.alloc(0),
  });
  const sidecarOnce = async () => {
    const v = view();
    const decision = await layer.decide(v);
    if (decision.kind !== 'forward' || decision.identity === null)
      throw new Error('the bench session is not signed in');
    forwardHeaders(nodeHeaders, decision.edits, false);
  };
  const sidecarSamples: number[] = [];
  for (let i = 0; i < 2000; i++) await sidecarOnce(); // warm-up
  const sidecarCount = quick ? 20_000 : 100_000;
  const sidecarStart = performance.now();
  for (let i = 0; i < sidecarCount; i++) {
    const t = performance.now();
    await sidecarOnce();
    sidecarSamples.push((performance.now() - t) * 1000);
  }
  const sidecarRate = (sidecarCount * 1000) / (performance.now() - sidecarStart);

  const interceptor = createInterceptor(inServerPolicy(layer));
  const host = loadModuleHost();
  interceptor.attachHost(host.link, `${layer.config.apiPrefix}/`);
  try {
    const warm = await host.replay(
      Array.from({ length: 2000 }, () => request),
      8,
    );
    if (warm.some((r) => r.kind !== 'continue' || r.completions !== 1))
      throw new Error('the hook did not forward the signed-in request');
    const rows: string[][] = [
      [
        'sidecar core path, in process (baseline)',
        formatRate(sidecarRate),
        '1.00×',
        `${percentile(sidecarSamples, 50).toFixed(0)} µs`,
        `${percentile(sidecarSamples, 99).toFixed(0)} µs`,
        '—',
        '—',
        '—',
      ],
    ];
    for (const threads of [1, 8, 64]) {
      const count = quick ? 10_000 : 50_000;
      const before = stats(interceptor);
      const cpuBefore = threadCpuNs();
      const start = performance.now();
      // Counts and times only: turning every applied header back into JavaScript is the harness's work, not the hook's.
      const results = await host.replay(
        Array.from({ length: count }, () => request),
        threads,
        false,
      );
      const withHarness = (count * 1000) / (performance.now() - start);
      const cpuAfter = threadCpuNs();
      const after = stats(interceptor);
      if (results.some((r) => r.completions !== 1)) throw new Error('a request was not completed exactly once');
      // The rate: decisions over the window from the first submission to the last decision applied, on the
      // host's clock. The harness's own work on the JavaScript thread (the requests read into native
      // strings before the threads start, the results turned into objects after) falls outside it.
      const first = Math.min(...results.map((r) => r.submittedAt));
      const last = Math.max(...results.map((r) => r.submittedAt + r.micros));
      const rate = (count * 1e6) / (last - first);
      const micros = results.map((r) => r.micros);
      const perWake =
        after && before ? ((after.requests - before.requests) / (after.batches - before.batches)).toFixed(1) : 'n/a';
      const jsCpu =
        cpuBefore !== undefined && cpuAfter !== undefined
          ? `${((cpuAfter - cpuBefore) / count / 1000).toFixed(1)} µs`
          : 'n/a';
      rows.push([
        `hook, ${threads} native thread${threads === 1 ? '' : 's'}`,
        formatRate(rate),
        `${(rate / sidecarRate).toFixed(2)}×`,
        `${percentile(micros, 50).toFixed(0)} µs`,
        `${percentile(micros, 99).toFixed(0)} µs`,
        formatRate(withHarness),
        perWake,
        jsCpu,
      ]);
    }
    return table(
      [
        'signed-in GET, decision only (no proxying)',
        'decisions/s',
        'vs sidecar core path',
        'p50',
        'p99',
        'with harness',
        'requests per wake',
        'JS-thread CPU per decision (with harness)',
      ],
      rows,
    );
  } finally {
    interceptor.close();
  }
}
