import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ensurePrograms,
  machineProbes,
  pathOf,
  plan,
  requirements,
  stopMessage,
  type Probes,
  type Requirement,
} from '../../scripts/test-requirements.mjs';

const nginx: Requirement = { what: 'nginx', path: '/usr/sbin/nginx', env: 'GATEHOUSE_NGINX', debian: 'nginx-light' };
const redisCli: Requirement = { what: 'redis-cli', path: '/usr/bin/redis-cli', debian: 'redis-tools' };
const libnode: Requirement = {
  what: 'libnode',
  path: '/usr/lib/libnode.so',
  also: ['build/libnode/libnode.so'],
  debian: 'libnode-dev',
  script: 'scripts/inserver/libnode.sh',
};
const redisServer: Requirement = { what: 'redis-server', path: '/usr/bin/redis-server', debian: 'redis-server' };

function probes(present: string[], overrides: Partial<Probes> = {}): Probes {
  return { exists: (path) => present.includes(path), env: {}, isRoot: true, hasAptGet: true, ...overrides };
}

describe('npm test: the programs the tests need', () => {
  describe('the decision', () => {
    it('is ready when every program is where the tests look', () => {
      const decision = plan([nginx, redisCli], probes(['/usr/sbin/nginx', '/usr/bin/redis-cli']));
      expect(decision.action).to.equal('ready');
    });

    it("installs the missing programs' packages as root with apt-get, each package once", () => {
      const decision = plan(
        [nginx, redisCli, redisServer, { ...redisCli, what: 'the same package again', path: '/x' }],
        probes(['/usr/bin/redis-server']),
      );
      expect(decision.action).to.equal('install');
      expect(decision.packages).to.deep.equal(['nginx-light', 'redis-tools']);
    });

    it('prints the line with sudo and stops when not root', () => {
      const decision = plan([nginx, redisCli], probes([], { isRoot: false }));
      expect(decision.action).to.equal('stop');
      const message = stopMessage(decision, { env: {}, isRoot: false, context: 'npm test' });
      expect(message).to.include(
        'Install them (Debian/Ubuntu): sudo apt-get update && sudo apt-get install -y nginx-light redis-tools',
      );
    });

    it('prints the line without sudo and stops as root where apt-get is not', () => {
      const decision = plan([nginx], probes([], { hasAptGet: false }));
      expect(decision.action).to.equal('stop');
      const message = stopMessage(decision, { env: {}, isRoot: true, context: 'npm test' });
      expect(message).to.include('Install them (Debian/Ubuntu): apt-get update && apt-get install -y nginx-light');
    });

    it('stops, installing nothing, when a variable names a missing binary, even as root with apt-get', () => {
      const env = { GATEHOUSE_NGINX: '/opt/nginx/sbin/nginx' };
      const decision = plan([nginx, redisCli], probes(['/usr/sbin/nginx'], { env }));
      expect(decision.action).to.equal('stop');
      expect(decision.overridden).to.deep.equal([nginx]);
      expect(decision.packages).to.deep.equal(['redis-tools']);
      const message = stopMessage(decision, { env, isRoot: true, context: 'npm test' });
      expect(message.join('\n')).to.contain('GATEHOUSE_NGINX=/opt/nginx/sbin/nginx names no program');
    });

    it('looks where the variable points, and is ready when a binary is there', () => {
      const env = { GATEHOUSE_NGINX: '/opt/nginx/sbin/nginx' };
      expect(plan([nginx], probes(['/opt/nginx/sbin/nginx'], { env })).action).to.equal('ready');
    });

    it('gives every program in the list a Debian package, and looks for it at an absolute path', () => {
      for (const requirement of requirements) {
        expect(requirement.debian, requirement.what).to.match(/^[a-z0-9][a-z0-9.+-]+$/);
        expect(pathOf(requirement, {}), requirement.what).to.match(/^\//);
      }
    });

    it('looks for a path given relative to the repository inside the repository, wherever it runs from', () => {
      const inside: Requirement = { what: 'a file of the repository', path: 'package.json', debian: 'none' };
      expect(pathOf(inside, {})).to.equal(join(process.cwd(), 'package.json'));
      const run = spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const m = await import(${JSON.stringify(join(process.cwd(), 'scripts/test-requirements.mjs'))}); console.log(m.pathOf({ path: 'package.json' }, {}));`,
        ],
        { cwd: tmpdir(), encoding: 'utf8' },
      );
      expect(run.stdout.trim()).to.equal(join(process.cwd(), 'package.json'));
    });
  });

  describe('installing', () => {
    it('runs apt-get update once and install once, says what and why, then goes on', () => {
      const present: string[] = [];
      const calls: string[][] = [];
      const log: string[] = [];
      const ready = ensurePrograms([nginx, redisCli], {
        context: 'npm test',
        probes: probes(present),
        log: (line) => log.push(line),
        install: (args) => {
          calls.push(args);
          if (args[0] === 'install') present.push('/usr/sbin/nginx', '/usr/bin/redis-cli');
          return true;
        },
      });
      expect(ready).to.equal(true);
      expect(calls).to.deep.equal([['update'], ['install', '-y', 'nginx-light', 'redis-tools']]);
      expect(log).to.deep.equal([
        'npm test: installing nginx-light with apt-get: nginx, not found at /usr/sbin/nginx',
        'npm test: installing redis-tools with apt-get: redis-cli, not found at /usr/bin/redis-cli',
      ]);
    });

    it('stops after one install when the program is still missing, never installing again', () => {
      const calls: string[][] = [];
      const ready = ensurePrograms([nginx], {
        context: 'npm test',
        probes: probes([]),
        log: () => undefined,
        install: (args) => calls.push(args) > 0,
      });
      expect(ready).to.equal(false);
      expect(calls).to.have.length(2);
    });

    it('stops when apt-get fails', () => {
      const calls: string[][] = [];
      const log: string[] = [];
      const ready = ensurePrograms([nginx], {
        context: 'npm test',
        probes: probes([]),
        log: (line) => log.push(line),
        install: (args) => calls.push(args) > 1,
      });
      expect(ready).to.equal(false);
      expect(calls).to.deep.equal([['update']]);
      expect(log.join('\n')).to.contain('apt-get could not install nginx-light');
    });

    it("runs a requirement's own script instead of apt-get install for its package, then finds it", () => {
      const present: string[] = [];
      const calls: string[][] = [];
      const scripts: string[] = [];
      const log: string[] = [];
      const ready = ensurePrograms([nginx, libnode], {
        context: 'npm test',
        probes: probes(present),
        log: (line) => log.push(line),
        install: (args) => {
          calls.push(args);
          if (args[0] === 'install') present.push('/usr/sbin/nginx');
          return true;
        },
        runScript: (script) => {
          scripts.push(script);
          present.push(join(process.cwd(), 'build/libnode/libnode.so'));
          return true;
        },
      });
      expect(ready).to.equal(true);
      expect(calls).to.deep.equal([['update'], ['install', '-y', 'nginx-light']]);
      expect(scripts).to.deep.equal(['scripts/inserver/libnode.sh']);
      expect(log[1]).to.equal(
        `npm test: installing libnode-dev with scripts/inserver/libnode.sh: libnode, not found at /usr/lib/libnode.so or ${join(process.cwd(), 'build/libnode/libnode.so')}`,
      );
    });

    it('is ready when a requirement is at any of its places', () => {
      const decision = plan([libnode], probes([join(process.cwd(), 'build/libnode/libnode.so')]));
      expect(decision.action).to.equal('ready');
    });

    it('stops when a script fails, and names it in the line to run when it must stop', () => {
      const log: string[] = [];
      const ready = ensurePrograms([libnode], {
        context: 'npm test',
        probes: probes([]),
        log: (line) => log.push(line),
        install: () => true,
        runScript: () => false,
      });
      expect(ready).to.equal(false);
      expect(log.join('\n')).to.contain('scripts/inserver/libnode.sh could not install what it provides');
      const decision = plan([libnode], probes([], { isRoot: false }));
      expect(stopMessage(decision, { env: {}, isRoot: false, context: 'npm test' })).to.include(
        'Install with: bash scripts/inserver/libnode.sh',
      );
    });

    it('never runs apt-get when it must stop', () => {
      let called = false;
      const ready = ensurePrograms([nginx], {
        context: 'npm test',
        probes: probes([], { isRoot: false }),
        log: () => undefined,
        install: () => (called = true),
      });
      expect(ready).to.equal(false);
      expect(called).to.equal(false);
    });
  });

  describe('on this machine', () => {
    let dir: string;
    let aptLog: string;
    let fakePath: string;

    // An apt-get first on PATH that records its arguments and "installs" by creating the file
    // the requirement names; the probes, the PATH lookup and the process are the real ones.
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-requirements-'));
      aptLog = join(dir, 'apt-get.log');
      const bin = join(dir, 'bin');
      spawnSync('mkdir', [bin]);
      writeFileSync(
        join(bin, 'apt-get'),
        `#!/bin/sh\necho "$*" >> ${aptLog}\ncase "$*" in *install*) touch ${join(dir, 'program')};; esac\n`,
      );
      chmodSync(join(bin, 'apt-get'), 0o755);
      fakePath = `${bin}:${process.env.PATH ?? ''}`;
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('installs a program hidden from its path through apt-get on PATH, then finds it', () => {
      const program: Requirement = { what: 'a program', path: join(dir, 'program'), debian: 'a-package' };
      const log: string[] = [];
      const ready = ensurePrograms([program], {
        context: 'npm test',
        probes: { ...machineProbes({ ...process.env, PATH: fakePath }), isRoot: true },
        log: (line) => log.push(line),
      });
      expect(ready).to.equal(true);
      expect(readFileSync(aptLog, 'utf8')).to.equal('-qq update\n-qq install -y a-package\n');
      expect(log).to.have.length(1);
    });

    it('npm test with GATEHOUSE_NGINX at a missing path stops with the reason and runs no apt-get', () => {
      const run = spawnSync(process.execPath, ['scripts/test-requirements.mjs'], {
        env: { ...process.env, PATH: fakePath, GATEHOUSE_NGINX: join(dir, 'no-nginx') },
        encoding: 'utf8',
      });
      expect(run.status).to.equal(1);
      expect(run.stderr).to.contain(`GATEHOUSE_NGINX=${join(dir, 'no-nginx')} names no program`);
      expect(run.stderr.trim().split('\n').at(-1)).to.equal('0 passed, 1 failed');
      expect(existsSync(aptLog)).to.equal(false);
    });
  });
});
