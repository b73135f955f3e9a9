// The Redis the benchmarks' gatehouse processes share: Debian's redis-server, started on a
// free loopback port in a temporary directory of its own with the benchmark's own settings
// (as apache.ts does for Apache), and stopped with the benchmark.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const REDIS_SERVER = '/usr/bin/redis-server';

/** Why the Redis rows cannot run here, or undefined when they can. */
export function redisMissing(): string | undefined {
  return existsSync(REDIS_SERVER) ? undefined : `${REDIS_SERVER} not found; apt-get install redis-server`;
}

export interface BenchRedis {
  readonly child: ChildProcess;
  readonly port: number;
  /** GATEHOUSE_REDIS_URL of this server. */
  readonly url: string;
  /** Commands the server has processed so far (INFO stats' total_commands_processed; the INFO itself included). */
  commandsProcessed(): Promise<number>;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
}

/** One inline command over a fresh connection; the whole reply as text. */
function ask(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    socket.setTimeout(2000, () => socket.destroy(new Error(`redis-server did not answer ${command}`)));
    socket.once('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('latin1');
      // A bulk string: `$<length>\r\n<bytes>\r\n`; a simple answer: one line.
      const bulk = /^\$(\d+)\r\n/.exec(reply);
      if (
        (bulk && reply.length >= bulk[0].length + Number(bulk[1]) + 2) ||
        (!reply.startsWith('$') && reply.endsWith('\r\n'))
      ) {
        socket.end();
        resolve(reply);
      }
    });
    socket.once('error', reject);
  });
}

export async function startBenchRedis(port: number): Promise<BenchRedis> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-redis-'));
  // What docs/deployment.md asks of a deployment that keeps sessions over a Redis restart: the
  // append-only file, written out once a second; sessions are never evicted.
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--logfile',
    path.join(dir, 'redis.log'),
    '--save',
    '',
    '--appendonly',
    'yes',
    '--appendfsync',
    'everysec',
    '--maxmemory-policy',
    'noeviction',
  ];
  const child = spawn(REDIS_SERVER, args, { stdio: 'ignore' });
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) {
      const log = existsSync(path.join(dir, 'redis.log'))
        ? readFileSync(path.join(dir, 'redis.log'), 'utf8').trim().split('\n').slice(-3).join('\n')
        : '';
      await close();
      throw new Error(`redis-server exited ${child.exitCode}: ${log}`);
    }
    if ((await ask(port, 'PING').catch(() => '')).startsWith('+PONG')) break;
    if (i === 200) {
      await close();
      throw new Error('redis-server did not answer PING within 5 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return {
    child,
    port,
    url: `redis://127.0.0.1:${port}`,
    commandsProcessed: async () =>
      Number(/total_commands_processed:(\d+)/.exec(await ask(port, 'INFO stats'))?.[1] ?? Number.NaN),
    close,
  };
}
