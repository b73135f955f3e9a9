// `--workers N|auto`: how many worker processes `gatehouse serve` runs.
import { readFileSync } from 'node:fs';
import os from 'node:os';

import { wholeNumber } from '../whole-number.js';

export const MAX_WORKERS = 256;

/**
 * The CPUs this process may use: its CPU affinity (os.availableParallelism), and, in a container,
 * its cgroup v2 CPU quota (`cpu.max`, such as `200000 100000` for two CPUs) when that is lower.
 */
export function usableCpus(cpuMaxFile = '/sys/fs/cgroup/cpu.max'): number {
  const affinity = os.availableParallelism();
  try {
    const [quota, period] = readFileSync(cpuMaxFile, 'utf8').trim().split(/\s+/);
    if (quota === undefined || quota === 'max' || period === undefined) return affinity;
    const cpus = Math.ceil(Number(quota) / Number(period));
    return Number.isFinite(cpus) && cpus >= 1 ? Math.min(affinity, cpus) : affinity;
  } catch {
    return affinity; // no cgroup v2 file (not Linux, or cgroup v1): the affinity alone
  }
}

/** The value of --workers: `auto` (usableCpus), or a whole number from 1 to MAX_WORKERS; undefined is 1. */
export function parseWorkerCount(
  value: string | undefined,
  cpus: () => number = usableCpus,
): number | { problem: string } {
  if (value === undefined) return 1;
  if (value === 'auto') return cpus();
  const count = wholeNumber(value);
  if (Number.isNaN(count) || count < 1 || count > MAX_WORKERS)
    return { problem: `--workers must be auto or a number from 1 to ${MAX_WORKERS} (got ${JSON.stringify(value)})` };
  return count;
}
