// The sidecar's container image, built by scripts/container/build.sh, then run as far as this
// machine can run it: containers cannot start here (the runtime cannot set rlimits), so the image
// is unpacked (umoci: its root file system and its runtime configuration) and its entrypoint runs
// in a chroot of that file system, as the image's user, with the image's environment and working
// directory. A user signs in through it at a real OpenID provider on loopback. Run by
// `npm run test:container` as root (about two minutes), not by npm test.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { Browser } from '../support/browser.js';
import { root } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { startDeployedSurroundings, type DeployedSurroundings } from '../support/deployed-sidecar.js';

const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
const BUILT = path.join(root, 'build', 'container');

/** The OCI runtime configuration umoci writes beside the root file system (the parts used here). */
interface RuntimeConfig {
  readonly process: {
    readonly user: { readonly uid: number; readonly gid: number };
    readonly args: string[];
    readonly env: string[];
    readonly cwd: string;
  };
}

/** The image configuration in the docker archive (docker's format: it keeps HEALTHCHECK). */
interface ImageConfig {
  readonly config: {
    readonly User: string;
    readonly Entrypoint: string[];
    readonly Cmd: string[];
    readonly Env: string[];
    readonly WorkingDir: string;
    readonly Volumes: Record<string, object>;
    readonly StopSignal: string;
    readonly ExposedPorts: Record<string, object>;
    readonly Healthcheck: { readonly Test: string[] };
  };
}

/** A file of the docker archive, read with tar. */
function fromArchive(archive: string, member: string): string {
  return execFileSync('tar', ['-xOf', archive, member], { encoding: 'utf8' });
}

/**
 * `command` run in a chroot of `rootfs` as `uid`, in a mount namespace of its own (with /proc and
 * /dev, which it loses when it ends), with only `env` and in `cwd`. Every step execs the next, so
 * the child's pid is the command's.
 */
function inImage(
  rootfs: string,
  uid: number,
  gid: number,
  cwd: string,
  env: readonly string[],
  command: readonly string[],
): ChildProcess {
  const script =
    'mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" && r=$1 u=$2 d=$3 && shift 3 && exec chroot --userspec="$u" "$r" /usr/bin/env -i --chdir="$d" "$@"';
  const args = [
    '--mount',
    '--propagation',
    'private',
    '--',
    'sh',
    '-c',
    script,
    'in-image',
    rootfs,
    `${uid}:${gid}`,
    cwd,
    ...env,
    ...command,
  ];
  return spawn('unshare', args, { stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs `command` in the image to its end: its exit code and output. */
function runInImage(
  rootfs: string,
  uid: number,
  gid: number,
  cwd: string,
  env: readonly string[],
  command: readonly string[],
): Promise<{ code: number | null; output: string }> {
  const child = inImage(rootfs, uid, gid, cwd, env, command);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

/** The uid a process runs as (the real one, from /proc). */
function processUid(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('Uid:'))!;
  return Number(line.split(/\s+/)[1]);
}

describe('the container image', function () {
  this.timeout(600_000);
  const work = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-image-'));
  const bundle = path.join(work, 'bundle');
  const rootfs = path.join(bundle, 'rootfs');
  let runtime: RuntimeConfig;
  let image: ImageConfig;

  before(function () {
    if (process.getuid?.() !== 0) throw new Error('the image test runs as root (debootstrap, umoci unpack, chroot)');
    const build = spawnSync('bash', ['scripts/container/build.sh'], { cwd: root, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`scripts/container/build.sh failed: ${build.stdout}${build.stderr}`);
    execFileSync('umoci', ['unpack', '--image', `${path.join(BUILT, 'oci')}:${version}`, bundle]);
    runtime = JSON.parse(readFileSync(path.join(bundle, 'config.json'), 'utf8')) as RuntimeConfig;
    const archive = path.join(BUILT, `gatehouse-${version}.tar`);
    const [manifest] = JSON.parse(fromArchive(archive, 'manifest.json')) as Array<{ Config: string }>;
    image = JSON.parse(fromArchive(archive, manifest!.Config)) as ImageConfig;
  });

  after(() => rmSync(work, { recursive: true, force: true }));

  it('runs gatehouse serve as the non-root user gatehouse, from its token store volume, stopped by SIGTERM', () => {
    expect(image.config.User).to.equal('10001:10001');
    expect(runtime.process.user).to.deep.equal({ uid: 10001, gid: 10001 });
    expect(readFileSync(path.join(rootfs, 'etc', 'passwd'), 'utf8')).to.match(/^gatehouse:x:10001:10001:/m);
    expect(image.config.Entrypoint).to.deep.equal(['/usr/local/bin/gatehouse', 'serve']);
    expect(runtime.process.args.slice(0, 2)).to.deep.equal(['/usr/local/bin/gatehouse', 'serve']);
    expect(image.config.StopSignal).to.equal('SIGTERM');
    expect(Object.keys(image.config.Volumes)).to.deep.equal(['/var/lib/gatehouse']);
    expect(image.config.WorkingDir).to.equal('/var/lib/gatehouse');
    expect(statSync(path.join(rootfs, 'var', 'lib', 'gatehouse')).uid).to.equal(10001);
    expect(Object.keys(image.config.ExposedPorts)).to.deep.equal(['8080/tcp']);
  });

  it('has a health check on /.auth/version', () => {
    expect(image.config.Healthcheck.Test[0]).to.equal('CMD');
    expect(image.config.Healthcheck.Test.join(' ')).to.include('/.auth/version');
  });

  it("carries Node 22 and gatehouse's production dependencies only", async () => {
    const node = await runInImage(
      rootfs,
      10001,
      10001,
      '/',
      ['PATH=/usr/local/bin:/usr/bin:/bin'],
      ['node', '--version'],
    );
    expect(node.output.trim()).to.match(/^v22\./);
    const modules = path.join(rootfs, 'opt', 'gatehouse', 'node_modules');
    for (const name of ['typescript', 'cmake-js', 'oidc-provider', 'node-addon-api']) {
      expect(() => statSync(path.join(modules, name)), name).to.throw(/ENOENT/);
    }
  });

  describe('its entrypoint, in a chroot of the unpacked image', () => {
    let around: DeployedSurroundings;
    let server: ChildProcess;
    let output = '';
    let port: number;
    /** The image's environment, then the deployment's: the port, the secrets. */
    let env: string[];

    before(async () => {
      port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      around = await startDeployedSurroundings(url, 'contained');
      // The configuration where the image reads it (a mounted file, in a real deployment).
      const config = around.document('OIDC_CLIENT_SECRET', ['openid', 'profile']);
      writeFileSync(path.join(rootfs, 'etc', 'gatehouse', 'auth.json'), JSON.stringify(config));
      env = [
        ...runtime.process.env.filter((entry) => !entry.startsWith('PORT=')),
        `PORT=${port}`,
        `OIDC_CLIENT_SECRET=${around.clientSecret}`,
      ];
      // The image's command, with the test app in place of the default upstream.
      const args = runtime.process.args.map((arg) => (arg === 'http://127.0.0.1:3000' ? around.app.url : arg));
      const { uid, gid } = runtime.process.user;
      server = inImage(rootfs, uid, gid, runtime.process.cwd, env, args);
      server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (output.includes('gatehouse listening on')) resolve();
        };
        server.stdout!.on('data', check);
        server.once('exit', (code) => reject(new Error(`the entrypoint exited ${code}: ${output}`)));
      });
    });

    after(async () => {
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
      await around?.close();
    });

    it("runs as the non-root user, the image's Node running the prebuilt addon", () => {
      expect(processUid(server.pid!)).to.equal(10001);
      expect(readFileSync(`/proc/${server.pid}/cmdline`, 'utf8').split('\0')[0]).to.equal('node');
      expect(output).to.match(/"core":"native","addon":"prebuilt"/);
    });

    it('answers /.auth/version', async () => {
      const answer = await new Browser().request(`http://127.0.0.1:${port}/.auth/version`);
      expect(answer.status).to.equal(200);
      expect(JSON.parse(answer.body)).to.deep.include({ version });
    });

    it("the health check's own command succeeds against it", async () => {
      const check = await runInImage(
        rootfs,
        10001,
        10001,
        '/var/lib/gatehouse',
        env,
        image.config.Healthcheck.Test.slice(1),
      );
      expect(check.code, check.output).to.equal(0);
    });

    it('signs a user in; the session is kept in the token store on the volume, written by the user', async () => {
      const browser = new Browser();
      const hops = await browser.follow(`http://127.0.0.1:${port}/reports`);
      const after = await browser.submitForm(hops.at(-1)!, /\/login$/, { username: 'demo', password: 'demo' });
      expect(after.at(-1)!.body).to.equal('hello Dev User');
      const keyFile = path.join(rootfs, 'var', 'lib', 'gatehouse', '.gatehouse', 'tokens', '.gatehouse-encryption-key');
      expect(statSync(keyFile).uid).to.equal(10001);
      expect(statSync(keyFile).mode & 0o777).to.equal(0o600);
    });

    it('stops on SIGTERM, gracefully, with exit code 0; the health check then fails', async () => {
      const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
      server.kill('SIGTERM');
      expect(await exited).to.equal(0);
      expect(output).to.include('stopping: no new connections');
      const check = await runInImage(
        rootfs,
        10001,
        10001,
        '/var/lib/gatehouse',
        env,
        image.config.Healthcheck.Test.slice(1),
      );
      expect(check.code).to.equal(1);
    });
  });
});
