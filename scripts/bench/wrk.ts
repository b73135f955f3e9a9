// Debian's wrk as the load generator: a client in C, so that the fastest targets are not bound
// by the generator's own CPU as a Node client would bind them. One saturated run, parsed from
// wrk's own report (`--latency` for the percentiles).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export const WRK = '/usr/bin/wrk';

/** What the benchmarks need from wrk, for scripts/test-requirements.mjs' installer. */
export const WRK_REQUIREMENT = {
  what: 'wrk (the load generator of the benchmarks)',
  path: WRK,
  debian: 'wrk',
} as const;

export function wrkInstalled(): boolean {
  return existsSync(WRK);
}

export interface WrkRun {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly seconds: number;
  readonly connections: number;
  readonly threads: number;
  /** Put before wrk's own command (taskset and its CPUs, to pin it). */
  readonly prefix?: readonly string[];
}

export interface WrkResult {
  readonly total: number;
  readonly rps: number;
  /** Answers other than 2xx/3xx, and socket errors. */
  readonly bad: number;
  /** Milliseconds; NaN when wrk did not report them. */
  readonly p50: number;
  readonly p99: number;
}

const UNIT_MS: Readonly<Record<string, number>> = { us: 0.001, ms: 1, s: 1000 };

/** A latency as wrk prints it (`812.00us`, `1.23ms`, `2.01s`), in milliseconds. */
export function wrkMilliseconds(text: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text.trim());
  return match ? Number(match[1]) * UNIT_MS[match[2]!]! : Number.NaN;
}

/** wrk's report, read. */
export function parseWrk(output: string): WrkResult {
  const number = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? 0);
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const percentile = (p: number) => wrkMilliseconds(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(output)?.[1] ?? '');
  return {
    total: number(/(\d+) requests in/),
    rps: number(/Requests\/sec:\s+([\d.]+)/),
    bad:
      number(/Non-2xx or 3xx responses: (\d+)/) + (errors ? errors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0),
    p50: percentile(50),
    p99: percentile(99),
  };
}

export async function runWrk(run: WrkRun): Promise<WrkResult> {
  const args = [
    `-t${run.threads}`,
    `-c${run.connections}`,
    `-d${run.seconds}s`,
    '--latency',
    ...Object.entries(run.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
    run.url,
  ];
  const command = [...(run.prefix ?? []), WRK, ...args];
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}: ${text}`))));
  });
  return parseWrk(output);
}
