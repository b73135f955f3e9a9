import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

export interface Candidate {
  readonly name: string;
  readonly run: () => unknown;
  /** `run` returns a promise that must be awaited. */
  readonly async?: boolean;
}

/** What interleavedMeasure found for each candidate, in the order given. */
export interface InterleavedResult {
  /** Runs per second. */
  readonly rates: number[];
  /** Nanoseconds of this thread's CPU time per run; undefined where it cannot be read (see threadCpuNs). */
  readonly threadCpuNsPerRun: number[] | undefined;
}

/**
 * Rates (runs/s) and this thread's CPU time per run of several candidates,
 * measured in interleaved slices, so that drift in machine speed (shared hosts,
 * frequency changes) falls on all of them alike and their ratios stay meaningful.
 */
export async function interleavedMeasure(
  candidates: readonly Candidate[],
  totalMs: number,
  sliceMs = 50,
): Promise<InterleavedResult> {
  const iterations = candidates.map(() => 0);
  const elapsed = candidates.map(() => 0);
  const cpuNs = candidates.map(() => 0);
  const cpuReadable = threadCpuNs() !== undefined;
  for (const candidate of candidates) {
    // Warm-up: let the JIT settle before anything counts.
    const until = performance.now() + Math.min(200, totalMs / 10);
    while (performance.now() < until) {
      if (candidate.async) await candidate.run();
      else candidate.run();
    }
  }
  const deadline = performance.now() + totalMs;
  while (performance.now() < deadline) {
    for (const [i, candidate] of candidates.entries()) {
      const cpuBefore = cpuReadable ? threadCpuNs()! : 0;
      const start = performance.now();
      let now: number;
      let n = 0;
      do {
        if (candidate.async) await candidate.run();
        else candidate.run();
        n++;
        now = performance.now();
      } while (now - start < sliceMs);
      iterations[i]! += n;
      elapsed[i]! += now - start;
      if (cpuReadable) cpuNs[i]! += threadCpuNs()! - cpuBefore;
    }
  }
  return {
    rates: iterations.map((n, i) => (n * 1000) / elapsed[i]!),
    threadCpuNsPerRun: cpuReadable ? cpuNs.map((ns, i) => ns / iterations[i]!) : undefined,
  };
}

/** Rates (runs/s) of several candidates, measured as interleavedMeasure does. */
export async function interleavedRates(
  candidates: readonly Candidate[],
  totalMs: number,
  sliceMs = 50,
): Promise<number[]> {
  return (await interleavedMeasure(candidates, totalMs, sliceMs)).rates;
}

/**
 * Completes `total` calls of `run` with `concurrency` of them in flight at all
 * times (each completion starts the next), as a server under steady load runs
 * them: work on the event loop overlaps work on libuv's pool. Resolves once all are done.
 */
export function keepInFlight(run: () => Promise<unknown>, concurrency: number, total: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let started = 0;
    let done = 0;
    const next = (): void => {
      if (started === total) return;
      started++;
      run().then(() => {
        done++;
        if (done === total) resolve();
        else next();
      }, reject);
    };
    for (let i = 0; i < Math.min(concurrency, total); i++) next();
  });
}

export function formatRate(opsPerSecond: number): string {
  if (opsPerSecond >= 1e6) return `${(opsPerSecond / 1e6).toFixed(2)} M/s`;
  if (opsPerSecond >= 1e3) return `${(opsPerSecond / 1e3).toFixed(1)} k/s`;
  return `${opsPerSecond.toFixed(1)} /s`;
}

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/**
 * Nanoseconds this thread has run on a CPU (Linux: the first field of
 * /proc/thread-self/schedstat), or undefined where that is not available. Unlike
 * a rate, it is not changed by how the scheduler shares the CPUs between this
 * thread and libuv's pool: it is what the thread's own work cost.
 */
export function threadCpuNs(): number | undefined {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ', 1)[0]);
  } catch {
    return undefined;
  }
}
