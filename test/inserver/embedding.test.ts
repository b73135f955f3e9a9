// The IIS module's Node embedding (binding/iis/node_runtime.cpp). It must compile against the
// very Node headers of the running version (the embedder API moves between majors), and it runs
// for real against Debian's libnode (Node 18 as a shared library, libnode-dev): a Linux test host
// (binding/host/libnode_host.cpp) links the module's runtime, its option parsing, its 8 MB stack
// thread and its engine slot, and starts the module's real boot script (binding/iis/boot.cjs) in
// a package whose entry is a small core of the tests' own (test/inserver/embedded/core.cjs: Node
// 18 cannot run the gatehouse core itself). `bash scripts/inserver/libnode.sh` provides libnode
// (bash .ci/run runs it); without it the run is skipped, saying so.
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

import { expect } from 'chai';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const NODE_INCLUDE = path.resolve(path.dirname(process.execPath), '..', 'include', 'node');
const ADDON = path.join(ROOT, 'build', 'Release', 'gatehouse_native.node');
const HOST_DIR = path.join(ROOT, 'build', 'libnode-host');
const MULTIARCH = 'x86_64-linux-gnu';

describe('IIS module: the Node embedding', function () {
  this.timeout(60_000);

  it(`compiles against this Node's headers (${process.version}) without a warning`, () => {
    // C++20: the V8 headers of Node 22 and later require it (and MSVC builds the module so).
    const run = () =>
      execFileSync(
        'g++',
        [
          '-std=c++20',
          '-fsyntax-only',
          '-Wall',
          '-Wextra',
          '-Werror',
          '-isystem',
          NODE_INCLUDE,
          path.join(ROOT, 'binding', 'iis', 'node_runtime.cpp'),
        ],
        { encoding: 'utf8', stdio: 'pipe' },
      );
    expect(run).not.to.throw();
  });
});

/** Where libnode-dev's files are: installed (/), unpacked by scripts/inserver/libnode.sh, or nowhere. */
function libnodeRoot(): string | undefined {
  for (const root of ['/', path.join(ROOT, 'build', 'libnode')]) {
    const lib = path.join(root, 'usr', 'lib', MULTIARCH, 'libnode.so');
    const header = path.join(root, 'usr', 'include', 'node', 'node.h');
    // Debian's libnode reads the JavaScript it keeps outside the library from /usr/share/nodejs.
    if (existsSync(lib) && existsSync(header) && existsSync('/usr/share/nodejs/cjs-module-lexer/lexer.js')) return root;
  }
  return undefined;
}

/** Builds the test host against libnode into build/libnode-host (the addon's build/ stays untouched). */
function buildHost(root: string): string {
  const lib = path.join(root, 'usr', 'lib', MULTIARCH);
  const output = path.join(HOST_DIR, 'gatehouse_libnode_host');
  mkdirSync(HOST_DIR, { recursive: true });
  const sources = [
    'binding/host/libnode_host.cpp',
    'binding/iis/node_runtime.cpp',
    'binding/iis/node_options.cpp',
    'binding/iis/linked_binding.cpp',
    'binding/iis/host_link.cpp',
    'binding/iis/stack_thread.cpp',
    'binding/iis/engine_slot.cpp',
    'binding/iis/deadline_timer.cpp',
  ].map((source) => path.join(ROOT, source));
  execFileSync(
    'g++',
    [
      '-std=c++17',
      '-O1',
      '-Wall',
      '-Wextra',
      '-Werror',
      '-DNAPI_VERSION=8',
      '-isystem',
      path.join(root, 'usr', 'include', 'node'),
      '-o',
      output,
      ...sources,
      `-L${lib}`,
      '-lnode',
      '-luv',
      `-Wl,-rpath,${lib}`,
      '-pthread',
    ],
    { stdio: 'pipe' },
  );
  return output;
}

/** A package laid out as installed: binding/iis/boot.cjs, and the tests' core as dist/inserver/main.js (or none). */
function packageWith(core: boolean): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-embedded-'));
  mkdirSync(path.join(dir, 'binding', 'iis'), { recursive: true });
  copyFileSync(path.join(ROOT, 'binding', 'iis', 'boot.cjs'), path.join(dir, 'binding', 'iis', 'boot.cjs'));
  if (core) {
    mkdirSync(path.join(dir, 'dist', 'inserver'), { recursive: true });
    copyFileSync(
      path.join(ROOT, 'test', 'inserver', 'embedded', 'core.cjs'),
      path.join(dir, 'dist', 'inserver', 'main.js'),
    );
  }
  return dir;
}

/** The test host with Node started in it: one command a line in, one answer a line out, reports kept apart. */
class EmbeddingHost {
  readonly reports: string[] = [];
  readonly logFile: string;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly answers: string[] = [];
  private waiting: ((line: string) => void) | undefined;
  private readonly exited: Promise<number | null>;

  constructor(binary: string, bootScript: string, nodeOptions: string, startWaitMs?: number) {
    this.logFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'gatehouse-embedded-log-')), 'gatehouse.log');
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('GATEHOUSE_')));
    this.child = spawn(binary, startWaitMs === undefined ? [bootScript] : [bootScript, String(startWaitMs)], {
      env: {
        ...env,
        GATEHOUSE_NODE_OPTIONS: nodeOptions,
        GATEHOUSE_LOG_FILE: this.logFile,
        GATEHOUSE_TEST_ADDON: ADDON,
        // Must not reach the embedded Node: only GATEHOUSE_NODE_OPTIONS applies there.
        NODE_OPTIONS: '--max-old-space-size=333',
      },
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      if (line.startsWith('report ')) {
        this.reports.push(line.slice('report '.length));
        return;
      }
      const waiting = this.waiting;
      this.waiting = undefined;
      if (waiting) waiting(line);
      else this.answers.push(line);
    });
  }

  /** The next answer line. */
  private next(): Promise<string> {
    const queued = this.answers.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  async send(command: string): Promise<string> {
    this.child.stdin.write(`${command}\n`);
    return this.next();
  }

  async started(): Promise<void> {
    expect(await this.next()).to.equal('started');
  }

  /** { status, body } as the engine slot answered a GET of path. */
  async request(urlPath: string): Promise<{ status: number; body: string }> {
    const line = await this.send(`request ${urlPath}`);
    const m = /^answer (\d+) ?(.*)$/.exec(line);
    if (!m) throw new Error(`not an answer: ${line}`);
    return { status: Number(m[1]), body: m[2]! };
  }

  /** Until the core has attached: the engine slot answers 503 before (once every 50 ms). */
  async untilReady(): Promise<void> {
    for (let attempt = 0; attempt < 600; attempt++) {
      const { status } = await this.request('/ready');
      if (status === 200) return;
      expect(status).to.equal(503);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the core never attached; reports: ${this.reports.join('\n')}`);
  }

  async untilEnded(): Promise<void> {
    for (let attempt = 0; attempt < 600; attempt++) {
      if ((await this.send('ended')) === 'ended yes') return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('Node never ended');
  }

  async untilReported(pattern: RegExp): Promise<string> {
    for (let attempt = 0; attempt < 600; attempt++) {
      const found = this.reports.find((line) => pattern.test(line));
      if (found !== undefined) return found;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`never reported ${pattern}; reports: ${this.reports.join('\n')}`);
  }

  log(): Array<{ level: number; msg: string; err?: { message: string } }> {
    if (!existsSync(this.logFile)) return [];
    return readFileSync(this.logFile, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; msg: string; err?: { message: string } });
  }

  /** Stops Node (NodeRuntime::Stop) and returns the host's exit code: 0 when it lived through everything. */
  async stop(): Promise<number | null> {
    expect(await this.send('stop')).to.equal('stopped');
    this.child.stdin.end();
    return this.exited;
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

describe('IIS module: the Node embedding run for real (libnode)', function () {
  this.timeout(120_000);
  let binary = '';
  const hosts: EmbeddingHost[] = [];

  before(function () {
    const root = libnodeRoot();
    if (root === undefined) {
      console.log(
        '    skipped: libnode-dev is absent (Node as a shared library); `bash scripts/inserver/libnode.sh` provides it',
      );
      this.skip();
    }
    binary = buildHost(root);
  });

  afterEach(() => {
    for (const host of hosts.splice(0)) host.kill();
  });

  function start(nodeOptions = '', core = true, startWaitMs?: number): EmbeddingHost {
    const boot = path.join(packageWith(core), 'binding', 'iis', 'boot.cjs');
    const host = new EmbeddingHost(binary, boot, nodeOptions, startWaitMs);
    hosts.push(host);
    return host;
  }

  it('GATEHOUSE_NODE_OPTIONS reach Node and V8 as command-line options: --max-old-space-size sets the heap limit', async () => {
    const small = start('--max-old-space-size=96  --stack-trace-limit=20');
    await small.started();
    await small.untilReady();
    const heap = JSON.parse((await small.request('/heap')).body) as { heapSizeLimit: number; execArgv: string[] };
    // V8's limit is the old space asked for plus the young generation (a few MB): never the default GBs.
    expect(heap.heapSizeLimit).to.be.within(96 * 1024 * 1024, 160 * 1024 * 1024);
    expect(heap.execArgv).to.deep.equal(['--max-old-space-size=96', '--stack-trace-limit=20']);
    expect(small.reports).to.deep.equal([]);
    expect(await small.stop()).to.equal(0);

    const plain = start('');
    await plain.started();
    await plain.untilReady();
    const defaults = JSON.parse((await plain.request('/heap')).body) as { heapSizeLimit: number; execArgv: string[] };
    expect(defaults.execArgv, 'NODE_OPTIONS is not the embedded Node’s').to.deep.equal([]);
    expect(defaults.heapSizeLimit).to.be.above(400 * 1024 * 1024);
    expect(await plain.stop()).to.equal(0);
  });

  it('options the embedded Node may not take are refused by name and left out; Node starts without them', async () => {
    const host = start('--inspect=0 --require=/tmp/x.js --max-old-space-size=128 --stack-size=9000 --eval=1');
    await host.started();
    await host.untilReady();
    const { execArgv } = JSON.parse((await host.request('/heap')).body) as { execArgv: string[] };
    expect(execArgv).to.deep.equal(['--max-old-space-size=128']);
    const refused = host.reports.filter((line) => line.startsWith('gatehouse: GATEHOUSE_NODE_OPTIONS: '));
    expect(refused).to.have.length(4);
    expect(refused[0]).to.match(/--inspect=0 is not an option the embedded Node takes/);
    expect(refused[1]).to.match(/--require=\/tmp\/x\.js is not an option/);
    expect(refused[2]).to.match(/--stack-size=9000 is more than the Node thread's stack allows/);
    expect(refused[3]).to.match(/--eval=1 is not an option/);
    expect(await host.stop()).to.equal(0);
  });

  it('a runaway recursion in the core is a RangeError on the 8 MB thread, and the core decides on', async () => {
    const host = start();
    await host.started();
    await host.untilReady();
    expect(await host.request('/recurse')).to.deep.equal({ status: 200, body: 'RangeError' });
    expect(await host.request('/recurse')).to.deep.equal({ status: 200, body: 'RangeError' });
    expect((await host.request('/ready')).status).to.equal(200);
    expect(await host.stop()).to.equal(0);
  });

  it('process.exit() in the core: Node ends, the host lives and answers 503, the exit is logged', async () => {
    const host = start();
    await host.started();
    await host.untilReady();
    // The decision that called process.exit() ends with Node: failed (500) or refused (503), never left waiting.
    const during = await host.request('/exit');
    expect([500, 503]).to.include(during.status);
    await host.untilEnded();
    expect(await host.request('/ready')).to.deep.equal({
      status: 503,
      body: '{"error":"The authentication layer is not running."}',
    });
    await host.untilReported(/^gatehouse: Node exited with code 7 /);
    await host.untilReported(/^\(Node has ended\)$/); // the module's hook: its waiting requests go on
    await host.untilReported(/in-server: the core ended Node \(process\.exit, exit code 7\)/);
    expect(host.log().map((line) => line.msg)).to.include(
      'in-server: the core ended Node (process.exit, exit code 7); the module answers 503 and asks IIS for a new worker process',
    );
    expect(await host.stop()).to.equal(0);
  });

  it('an uncaught exception in the core: Node ends, the host lives and answers 503, the exception is logged', async () => {
    const host = start();
    await host.started();
    await host.untilReady();
    expect((await host.request('/throw')).status).to.equal(200);
    await host.untilEnded();
    expect((await host.request('/ready')).status).to.equal(503);
    const reported = await host.untilReported(/in-server: an uncaught exception \(uncaughtException\) ended the core/);
    expect(reported).to.include('the tests’ core throws from the event loop');
    await host.untilReported(/^gatehouse: Node exited with code 1 /);
    const logged = host.log().find((line) => /uncaught exception/.test(line.msg));
    expect(logged?.err?.message).to.equal('the tests’ core throws from the event loop');
    expect(await host.stop()).to.equal(0);
  });

  it('cold start: a request that arrives while Node boots waits for the core and is decided by it', async () => {
    const host = start('', true, 100_000);
    await host.started();
    expect(await host.request('/ready')).to.deep.equal({ status: 200, body: 'ready' });
    expect(await host.stop()).to.equal(0);
  });

  it('cold start: a boot that fails answers the waiting request 503 as Node ends, not when the wait runs out', async function () {
    // Shorter than the wait: only Node's end can answer the request in time.
    this.timeout(60_000);
    const host = start('', false, 100_000);
    await host.started();
    expect(await host.request('/ready')).to.deep.equal({
      status: 503,
      body: '{"error":"The authentication layer is not running."}',
    });
    await host.untilReported(/in-server: cannot load .*main\.js/);
    expect(await host.stop()).to.equal(0);
  });

  it('a boot that fails: its reason is logged, Node ends, every request 503', async () => {
    // No dist/inserver/main.js beside the boot script: its import fails.
    const host = start('', false);
    await host.started();
    const reported = await host.untilReported(/in-server: cannot load .*main\.js/);
    expect(reported).to.match(/Cannot find module|ERR_MODULE_NOT_FOUND/);
    await host.untilEnded();
    expect((await host.request('/ready')).status).to.equal(503);
    expect(host.log().find((line) => /cannot load/.test(line.msg))?.level).to.equal(60);

    // A boot script that is not there at all: the embedding's own main script says why.
    const missing = new EmbeddingHost(binary, path.join(os.tmpdir(), 'gatehouse-no-such-boot.cjs'), '');
    hosts.push(missing);
    await missing.started();
    const why = await missing.untilReported(
      /the boot script .*gatehouse-no-such-boot\.cjs failed: Error: Cannot find module/,
    );
    expect(why).to.include('gatehouse-no-such-boot.cjs');
    await missing.untilEnded();
    expect((await missing.request('/ready')).status).to.equal(503);
    expect(await missing.stop()).to.equal(0);
  });
});
