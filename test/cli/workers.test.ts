// `gatehouse serve --workers N`, run as a user runs it: one port, N worker
// processes, a dead worker replaced, one graceful stop for all, and the token
// store directory shared so that a logout on one worker holds on every other.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import { expect } from 'chai';

import { startDevIdentityProvider, type RunningIdentityProvider } from '../../src/dev/identity-provider.js';
import { parseWorkerCount, usableCpus } from '../../src/workers/worker-count.js';
import { Browser } from '../support/browser.js';
import { CLI, outputShowing, root, serve, type ServingProcess } from '../support/cli-process.js';
import { listen, type Listening } from '../support/http.js';
import { freePort } from '../support/free-port.js';
import { CLIENT_ID, defaultDocument } from '../support/sign-in.js';
import { sample } from '../support/prometheus.js';

/** The pids the primary said its workers have (its 'workers serving' line). */
function workerPids(output: string): number[] {
  const line = output.split('\n').find((l) => l.includes('"msg":"workers serving"'));
  return line === undefined ? [] : (JSON.parse(line) as { pids: number[] }).pids;
}

/** Which worker (its id) logged each access-log line so far. */
function workersThatAnswered(output: string): Set<number> {
  const ids = output
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('"status"') && line.includes('"worker"'))
    .map((line) => (JSON.parse(line) as { worker: number }).worker);
  return new Set(ids);
}

/** The gatehouse processes `pid` started (its workers; not the compiler tsx runs beside it). */
function children(pid: number): number[] {
  const listed = spawnSync('pgrep', ['-P', String(pid), '-f', 'cli'], { encoding: 'utf8' }).stdout;
  return listed.split('\n').filter(Boolean).map(Number);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('--workers: the count', () => {
  it('auto is the CPUs the process may use; a number from 1 to 256; anything else is a usage error naming the flag', () => {
    expect(parseWorkerCount(undefined)).to.equal(1);
    expect(parseWorkerCount('auto', () => 3)).to.equal(3);
    expect(parseWorkerCount('4')).to.equal(4);
    for (const bad of ['0', '-1', '257', '2.5', ' 2', 'two', ''])
      expect(parseWorkerCount(bad), bad)
        .to.have.property('problem')
        .that.match(/--workers must be auto or a number from 1 to 256/);
  });

  it("auto honours a container's CPU quota (cgroup v2 cpu.max) when it is lower than the CPUs it may run on", () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cpu-'));
    try {
      const file = path.join(directory, 'cpu.max');
      writeFileSync(file, '100000 100000\n');
      expect(usableCpus(file)).to.equal(1);
      writeFileSync(file, '150000 100000\n');
      expect(usableCpus(file)).to.equal(Math.min(2, os.availableParallelism()));
      writeFileSync(file, 'max 100000\n');
      expect(usableCpus(file)).to.equal(os.availableParallelism());
      expect(usableCpus(path.join(directory, 'missing'))).to.equal(os.availableParallelism());
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('gatehouse serve --workers: a start that fails', function () {
  this.timeout(30_000);

  it('workers that cannot start (an unusable token store directory) fail the start once, exit 1, with their error; nothing is left running', () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-workers-bad-'));
    try {
      const file = path.join(directory, 'not-a-directory');
      writeFileSync(file, 'x');
      const document = {
        ...defaultDocument('https://idp.example'),
        login: { tokenStore: { enabled: true, fileSystem: { directory: path.join(file, 'tokens') } } },
      };
      const result = spawnSync(
        process.execPath,
        [...CLI, 'serve', '--port', '0', '--upstream', 'http://127.0.0.1:9', '--workers', '2'],
        {
          cwd: root,
          env: { ...process.env, GATEHOUSE_AUTH_CONFIG_JSON: JSON.stringify(document), TEST_CLIENT_SECRET: 's' },
          encoding: 'utf8',
          timeout: 25_000,
          killSignal: 'SIGKILL',
        },
      );
      // spawnSync returns once every holder of the output pipes is gone: a worker left running would hold them to the timeout.
      expect(result.status, result.stderr).to.equal(1);
      expect(result.stderr).to.match(/token store directory .* cannot be used/);
      expect(result.stderr).to.match(/a worker stopped before it served/);
      expect(result.stdout).not.to.include('gatehouse listening on');
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('gatehouse serve --workers 2 (child processes)', function () {
  this.timeout(60_000);
  let app: Listening;
  let idp: RunningIdentityProvider;
  let server: ServingProcess;
  let storeDirectory: string;

  before(async () => {
    app = await listen(
      http.createServer((req, res) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ user: req.headers['x-platform-client-principal-id'] ?? null })),
      ),
    );
    const port = await freePort();
    const front = `http://127.0.0.1:${port}`;
    const secret = randomBytes(16).toString('hex');
    idp = await startDevIdentityProvider({
      clients: [
        {
          clientId: CLIENT_ID,
          clientSecret: secret,
          redirectUris: [`${front}/.auth/login/dev/callback`],
          postLogoutRedirectUris: [`${front}/.auth/logout/complete`],
        },
      ],
    });
    storeDirectory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-workers-'));
    const document = {
      ...defaultDocument(idp.issuer),
      login: { tokenStore: { enabled: true, fileSystem: { directory: storeDirectory } } },
    };
    server = await serve(
      {
        GATEHOUSE_AUTH_CONFIG_JSON: JSON.stringify(document),
        TEST_CLIENT_SECRET: secret,
        GATEHOUSE_ACCESS_LOG: 'on',
        GATEHOUSE_ENCRYPTION_KEY: '',
      },
      ['serve', '--port', String(port), '--upstream', app.url, '--workers', '2', '--metrics-port', '0'],
    );
  });
  after(async () => {
    server?.kill();
    await idp?.close();
    await app?.close();
    rmSync(storeDirectory, { recursive: true, force: true });
  });

  it('two workers answer on the one port, each of them', async () => {
    expect(workerPids(await outputShowing(server, 'workers serving'))).to.have.length(2);
    // The primary hands each new connection to the next worker.
    for (let i = 0; i < 6; i++) expect((await new Browser().request(`${server.url}/public/x`)).status).to.equal(200);
    await outputShowing(server, /"worker":2.*"status":200/);
    expect([...workersThatAnswered(server.output())].sort()).to.deep.equal([1, 2]);
  });

  it('a logout on one worker is honoured at once by the other, which had the session cached (the store directory tells them)', async () => {
    const browser = new Browser();
    const login = await browser.follow(`${server.url}/protected`);
    const done = await browser.submitForm(login.at(-1)!, /\/login$/, { username: 'demo', password: 'demo' });
    expect(done.at(-1)!.status).to.equal(200);
    // Every request a new connection: the workers take turns, and both now cache the session.
    for (let i = 0; i < 4; i++) {
      const page = await browser.request(`${server.url}/page`);
      expect(page.status).to.equal(200);
      expect((JSON.parse(page.body) as { user: string | null }).user).to.be.a('string');
    }
    const cookie = browser.cookie(server.url, 'PlatformAuthSession')!.value;
    expect((await browser.request(`${server.url}/.auth/logout`)).status).to.equal(302);
    await delay(100); // the notice's way through the primary
    const replay = new Browser();
    replay.setCookie(server.url, `PlatformAuthSession=${cookie}; Path=/`);
    for (let i = 0; i < 6; i++)
      expect((await replay.request(`${server.url}/page`)).status, `request ${i}`).to.equal(302);
  });

  it("the primary's metrics listener serves the sum over both workers", async () => {
    const metricsUrl = /metrics: GET (\S+)/.exec(await outputShowing(server, 'metrics: GET'))![1]!;
    const forwarded = async () =>
      sample(await (await fetch(metricsUrl)).text(), 'gatehouse_requests_total', {
        outcome: 'forwarded',
        reason: 'anonymous',
      });
    const before = await forwarded();
    for (let i = 0; i < 6; i++)
      expect((await new Browser().request(`${server.url}/public/counted`)).status).to.equal(200);
    expect((await forwarded()) - before).to.equal(6);
    // The requests went to both workers: neither alone counted all six.
    await outputShowing(
      server,
      /"worker":1.*counted[\s\S]*"worker":2.*counted|"worker":2.*counted[\s\S]*"worker":1.*counted/,
    );
    const counted = server
      .output()
      .split('\n')
      .filter((line) => line.includes('/public/counted'));
    expect(new Set(counted.map((line) => (JSON.parse(line) as { worker: number }).worker)).size).to.equal(2);
  });

  it('a worker killed is replaced (and said); the port keeps answering', async () => {
    const [victim] = workerPids(server.output());
    process.kill(victim!, 'SIGKILL');
    await outputShowing(server, 'replacement worker serving');
    expect(server.output()).to.match(/"signal":"SIGKILL".*"msg":"worker died: starting a replacement"/);
    for (let i = 0; i < 4; i++)
      expect((await new Browser().request(`${server.url}/public/after`)).status).to.equal(200);
  });

  it('SIGTERM to the primary stops every worker gracefully, then the primary, exit 0', async () => {
    const pids = children(server.pid);
    expect(pids).to.have.length(2);
    expect(await server.stop()).to.equal(0);
    expect(server.output()).to.include('"msg":"stopping: every worker stops gracefully"');
    for (const pid of pids) expect(alive(pid), `worker ${pid}`).to.equal(false);
  });
});
