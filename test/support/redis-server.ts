// A real redis-server (Debian's package) for the tests: started on a free
// loopback port in a directory of its own, with the tests' own settings, and
// stopped with the tests. It can be killed (SIGKILL) and started again on the
// same port and directory, keeping what its append-only file holds.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
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

export interface RedisServerOptions {
  readonly password?: string;
  /** More arguments for redis-server (a cluster node's, a sentinel's). */
  readonly extra?: readonly string[];
  /** A sentinel: no data, so no persistence settings (which it refuses). */
  readonly sentinel?: boolean;
  /** A configuration file to start from (a sentinel needs one it can rewrite), written in the server's directory. */
  readonly configFile?: (port: number) => string;
}

export async function startRedis(options: RedisServerOptions = {}): Promise<TestRedis> {
  if (!existsSync(REDIS_SERVER))
    throw new Error(`${REDIS_SERVER} is missing: apt-get install redis-server (bash .ci/run does)`);
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'gatehouse-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const configFile = options.configFile !== undefined ? path.join(directory, 'redis.conf') : undefined;
  if (configFile !== undefined) await fs.writeFile(configFile, options.configFile!(port));
  const args = [
    ...(configFile !== undefined ? [configFile] : []),
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    directory,
    // Everything written is in the append-only file at once: a kill loses nothing (what a deployment that keeps sessions over a restart sets, docs/deployment.md).
    ...(options.sentinel ? [] : ['--appendonly', 'yes', '--appendfsync', 'always', '--save', '']),
    '--daemonize',
    'no',
    '--logfile',
    path.join(directory, 'redis.log'),
    ...(options.password !== undefined ? ['--requirepass', options.password] : []),
    ...(options.extra ?? []),
  ];
  const start = async () => {
    child = spawn(REDIS_SERVER, args, { stdio: 'ignore' });
    for (let i = 0; i < 200; i++) {
      if (child.exitCode !== null)
        throw new Error(
          `redis-server exited ${child.exitCode}: ${await fs.readFile(path.join(directory, 'redis.log'), 'utf8').catch(() => '')}`,
        );
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

export interface TestTopology {
  /** GATEHOUSE_REDIS_URL, GATEHOUSE_REDIS_MODE (and the sentinel's name) for it. */
  readonly env: Record<string, string>;
  readonly servers: readonly TestRedis[];
  stop(): Promise<void>;
}

const REDIS_CLI = '/usr/bin/redis-cli';

/** One redis-server, as a topology (GATEHOUSE_REDIS_URL alone). */
export async function startRedisSingle(): Promise<TestTopology> {
  const server = await startRedis();
  return { env: { GATEHOUSE_REDIS_URL: server.url }, servers: [server], stop: () => server.stop() };
}

/** A Redis Cluster of three primaries (no replicas), its slots spread by redis-cli, ready when its state is ok. */
export async function startRedisCluster(): Promise<TestTopology> {
  const servers = await Promise.all(
    [0, 1, 2].map(() =>
      startRedis({
        extra: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000'],
      }),
    ),
  );
  const create = spawnSync(
    REDIS_CLI,
    [
      '--cluster',
      'create',
      ...servers.map((server) => `127.0.0.1:${server.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ],
    { encoding: 'utf8', timeout: 20_000 },
  );
  if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
  for (let i = 0; ; i++) {
    const states = servers.map(
      (server) => spawnSync(REDIS_CLI, ['-p', String(server.port), 'cluster', 'info'], { encoding: 'utf8' }).stdout,
    );
    if (states.every((info) => info.includes('cluster_state:ok'))) break;
    if (i > 200) throw new Error('the test cluster did not come up within 10 s');
    await delay(50);
  }
  return {
    env: { GATEHOUSE_REDIS_URL: servers.map((server) => server.url).join(','), GATEHOUSE_REDIS_MODE: 'cluster' },
    servers,
    stop: async () => void (await Promise.all(servers.map((server) => server.stop()))),
  };
}

/** A primary and one sentinel watching it under the name `gatehouse-test`. */
export async function startRedisSentinel(): Promise<TestTopology> {
  const primary = await startRedis();
  const sentinel = await startRedis({
    configFile: (port) =>
      `port ${port}\nbind 127.0.0.1\nsentinel monitor gatehouse-test 127.0.0.1 ${primary.port} 1\nsentinel down-after-milliseconds gatehouse-test 2000\n`,
    extra: ['--sentinel'],
    sentinel: true,
  });
  return {
    env: {
      GATEHOUSE_REDIS_URL: sentinel.url,
      GATEHOUSE_REDIS_MODE: 'sentinel',
      GATEHOUSE_REDIS_SENTINEL_NAME: 'gatehouse-test',
    },
    servers: [primary, sentinel],
    stop: async () => void (await Promise.all([sentinel.stop(), primary.stop()])),
  };
}
