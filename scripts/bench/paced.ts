// An open-loop load generator for latency: requests leave on a fixed schedule
// whether or not earlier ones have been answered, over a pool of keep-alive
// connections, and each is timed from the moment it is issued to the end of its
// answer with sub-millisecond resolution. (autocannon's rate option sends each
// connection's quota for a second in one burst and records whole milliseconds,
// which measures a burst's queue instead of the latency a request adds.)
import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface PacedResult {
  readonly sent: number;
  /** Answers other than 2xx, and requests that failed. */
  readonly bad: number;
  readonly p50: number;
  readonly p99: number;
}

export interface PacedOptions {
  readonly url: string;
  readonly headers: Record<string, string>;
  /** Requests per second, spread evenly. */
  readonly rate: number;
  readonly seconds: number;
  readonly connections: number;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function pacedLatency(options: PacedOptions): Promise<PacedResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const total = Math.round(options.rate * options.seconds);
  const latencies = new Float64Array(total);
  let answered = 0;
  let bad = 0;
  let issued = 0;
  const url = new URL(options.url);
  const done = new Promise<void>((resolve) => {
    const finish = () => {
      answered++;
      if (answered === total) resolve();
    };
    const issue = () => {
      const index = issued++;
      const start = performance.now();
      const request = http.request({ host: url.hostname, port: url.port, path: url.pathname, headers: options.headers, agent }, (response) => {
        response.resume();
        response.once('end', () => {
          latencies[index] = performance.now() - start;
          if (response.statusCode === undefined || response.statusCode < 200 || response.statusCode >= 300) bad++;
          finish();
        });
      });
      request.once('error', () => {
        latencies[index] = Number.POSITIVE_INFINITY;
        bad++;
        finish();
      });
      request.end();
    };
    const began = performance.now();
    // Timers fire about once a millisecond; each tick issues every request whose time has come.
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - began) / 1000) * options.rate) + 1);
      while (issued < due) issue();
      if (issued < total) setTimeout(tick, 1);
    };
    tick();
  });
  await done;
  agent.destroy();
  const sorted = latencies.sort();
  return { sent: total, bad, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}
