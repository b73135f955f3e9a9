// A real redis-server (Debian's package) for the tests: started on a free
// loopback port in a directory of its own, with the tests' own settings, and
// stopped with the tests. It can be killed (SIGKILL) and started again on the
// same port and directory, keeping what its append-only file holds.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import { freePort } from './free-port.js';

export const REDIS_SERVER = process.env.GATEHOUSE_REDIS_SERVER ?? '/usr/bin/redis-server';

export interface TestRedis {
  readonly port: number;
  readonly url: string;
  /** Ends the server at once (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory. */
  start(): Promise<void>;
  /** Freezes it (SIGSTOP): connections stay open, nothing is answered, as a Redis stuck in a long command or a swap storm. */
  pause(): void;
  /** Lets it go on (SIGCONT). */
  resume(): void;
  /** Stops it and removes its directory. */
  stop(): Promise<void>;
}

/** Whether the server answers PING on the port. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(500, () => socket.destroy());
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
}

export async function startRedis(options: { password?: string } = {}): Promise<TestRedis> {
  if (!existsSync(REDIS_SERVER)) throw new Error(`${REDIS_SERVER} is missing: apt-get install redis-server (bash .ci/run does)`);
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'gatehouse-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const args = [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', directory,
    // Everything written is in the append-only file at once: a kill loses nothing (what a deployment that keeps sessions over a restart sets, README).
    '--appendonly', 'yes', '--appendfsync', 'always', '--save', '',
    '--daemonize', 'no', '--logfile', path.join(directory, 'redis.log'),
    ...(options.password !== undefined ? ['--requirepass', options.password] : []),
  ];
  const start = async () => {
    child = spawn(REDIS_SERVER, args, { stdio: 'ignore' });
    for (let i = 0; i < 200; i++) {
      if (child.exitCode !== null) throw new Error(`redis-server exited ${child.exitCode}: ${await fs.readFile(path.join(directory, 'redis.log'), 'utf8').catch(() => '')}`);
      if (await answers(port)) return;
      await delay(25);
    }
    throw new Error('redis-server did not answer within 5 s');
  };
  const kill = async () => {
    const running = child;
    if (running === undefined || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await start();
  const auth = options.password !== undefined ? `:${encodeURIComponent(options.password)}@` : '';
  return {
    port,
    url: `redis://${auth}127.0.0.1:${port}`,
    kill,
    start,
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    stop: async () => {
      await kill();
      await fs.rm(directory, { recursive: true, force: true });
    },
  };
}
