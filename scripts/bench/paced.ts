// An open-loop load generator for latency: requests leave on a fixed schedule
// whether or not earlier ones have been answered, over a pool of keep-alive
// connections, and each is timed from the moment it is issued to the end of its
// answer with sub-millisecond resolution. (autocannon's rate option sends each
// connection's quota for a second in one burst and records whole milliseconds,
// which measures a burst's queue instead of the latency a request adds.)
//
// Several targets can share one schedule: their requests alternate, so every
// target sees the same moments of the machine (a stall of a shared VM lands on
// all of them alike instead of deciding one target's tail).
//
// Each run opens its connections afresh, so its first requests pay for connection
// set-up (and, behind a proxy, for new upstream connections): requests issued in
// the first `settleSeconds` are sent on the same schedule but not counted, so what
// is measured is the steady state a keep-alive client sees.
import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface PacedResult {
  /** Requests counted (issued after the settling period). */
  readonly sent: number;
  /** Answers other than 2xx, and requests that failed (counted whenever issued). */
  readonly bad: number;
  /** Every counted request's latency in ms, ascending (a failed request is +Infinity). */
  readonly latencies: Float64Array;
}

export interface PacedTarget {
  readonly url: string;
  readonly headers: Record<string, string>;
}

export interface PacedOptions {
  /** Requests per second to each target, spread evenly. */
  readonly rate: number;
  /** How long requests are counted. */
  readonly seconds: number;
  /** How long requests are sent before counting starts (connection set-up). */
  readonly settleSeconds: number;
  /** Keep-alive connections per target. */
  readonly connections: number;
}

/** The p-th percentile of ascending samples (nearest rank). */
export function percentile(sorted: Float64Array, p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Several runs' samples as one ascending set. */
export function pooled(results: readonly PacedResult[]): Float64Array {
  const all = new Float64Array(results.reduce((n, r) => n + r.latencies.length, 0));
  let at = 0;
  for (const r of results) {
    all.set(r.latencies, at);
    at += r.latencies.length;
  }
  return all.sort();
}

/** One result per target, in the order given. */
export async function pacedLatency(targets: readonly PacedTarget[], options: PacedOptions): Promise<PacedResult[]> {
  const settling = Math.round(options.rate * options.settleSeconds);
  const perTarget = settling + Math.round(options.rate * options.seconds);
  const runs = targets.map((target) => ({
    url: new URL(target.url),
    headers: target.headers,
    agent: new http.Agent({ keepAlive: true, maxSockets: options.connections }),
    latencies: new Float64Array(perTarget - settling),
    issued: 0,
    bad: 0,
  }));
  const total = perTarget * runs.length;
  let answered = 0;
  let issued = 0;
  await new Promise<void>((resolve) => {
    const finish = () => {
      answered++;
      if (answered === total) resolve();
    };
    const issue = () => {
      const run = runs[issued++ % runs.length]!;
      // Negative while settling: sent, not counted.
      const index = run.issued++ - settling;
      const start = performance.now();
      const request = http.request(
        { host: run.url.hostname, port: run.url.port, path: run.url.pathname, headers: run.headers, agent: run.agent },
        (response) => {
          response.resume();
          response.once('end', () => {
            if (index >= 0) run.latencies[index] = performance.now() - start;
            if (response.statusCode === undefined || response.statusCode < 200 || response.statusCode >= 300) run.bad++;
            finish();
          });
        },
      );
      request.once('error', () => {
        if (index >= 0) run.latencies[index] = Number.POSITIVE_INFINITY;
        run.bad++;
        finish();
      });
      request.end();
    };
    const began = performance.now();
    const combinedRate = options.rate * runs.length;
    // Timers fire about once a millisecond; each tick issues every request whose time has come.
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - began) / 1000) * combinedRate) + 1);
      while (issued < due) issue();
      if (issued < total) setTimeout(tick, 1);
    };
    tick();
  });
  return runs.map((run) => {
    run.agent.destroy();
    return { sent: run.latencies.length, bad: run.bad, latencies: run.latencies.sort() };
  });
}
