// How fast this machine is right now, printed before and after the benchmarks:
// shared VMs run in fast and slow phases (two to three times apart), and the
// absolute rates and latency tails of a run are only comparable between runs
// made in the same phase. Ratios against same-run baselines are what count.
import { createHash, generateKeyPairSync, sign, verify } from 'node:crypto';
import { performance } from 'node:perf_hooks';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const message = Buffer.alloc(600, 7);
const signature = sign('sha256', message, privateKey);
const block = Buffer.alloc(1 << 20, 1);

function timePerCall(calls: number, call: () => unknown): number {
  for (let i = 0; i < Math.ceil(calls / 10); i++) call(); // warm-up
  const start = performance.now();
  for (let i = 0; i < calls; i++) call();
  return (performance.now() - start) / calls;
}

/** One line: an RSA-2048 signature check and SHA-256 throughput, on the calling thread. */
export function machineProbe(): string {
  const verifyMs = timePerCall(500, () => verify('sha256', message, publicKey, signature));
  const hashMs = timePerCall(30, () => createHash('sha256').update(block).digest());
  const megabytesPerSecond = block.length / hashMs / 1000; // bytes per ms → MB/s
  return `machine probe: RSA-2048 verify ${(verifyMs * 1000).toFixed(0)} µs, SHA-256 ${megabytesPerSecond.toFixed(0)} MB/s`;
}
