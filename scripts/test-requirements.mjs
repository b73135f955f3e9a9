// Before the suite starts (npm test): the system programs its tests start
// themselves. A fresh machine hears what it lacks at once, not as failures
// scattered through a four-minute run. Run as root where apt-get is (a fresh
// machine, a container, CI), the missing ones are installed from Debian's
// packages and the suite goes on; anywhere else the one line that installs them
// is printed and the suite stops. The list below is the only list: `.ci/run`
// asks this script for it (--missing-packages) when it installs with sudo.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Each entry: what the tests use it for, where they look for it (`path`, then
// any of `also`), the variable that points them at another binary (optional),
// the Debian package with it, and the project's own script that installs it
// where a plain `apt-get install` cannot (optional).
export const requirements = [
  {
    what: 'Chromium (the end-to-end browser tests)',
    path: '/usr/bin/chromium',
    env: 'GATEHOUSE_CHROMIUM',
    debian: 'chromium',
  },
  {
    what: 'redis-server (the Redis store and several-instance tests)',
    path: '/usr/bin/redis-server',
    env: 'GATEHOUSE_REDIS_SERVER',
    debian: 'redis-server',
  },
  { what: 'redis-cli (makes the test Redis Cluster)', path: '/usr/bin/redis-cli', debian: 'redis-tools' },
  {
    what: 'nginx (forward authentication behind the shipped nginx configuration)',
    path: '/usr/sbin/nginx',
    env: 'GATEHOUSE_NGINX',
    debian: 'nginx-light',
  },
  {
    what: 'Caddy (forward authentication behind the shipped Caddyfile)',
    path: '/usr/bin/caddy',
    env: 'GATEHOUSE_CADDY',
    debian: 'caddy',
  },
  {
    // Debian's libnode108 conflicts with the nodejs package of other sources (NodeSource's, say);
    // scripts/inserver/libnode.sh then unpacks the same package into build/libnode, where the
    // embedding test finds it too.
    what: 'libnode (the IIS module’s Node embedding, run for real)',
    path: '/usr/lib/x86_64-linux-gnu/libnode.so',
    also: ['build/libnode/usr/lib/x86_64-linux-gnu/libnode.so'],
    debian: 'libnode-dev',
    script: 'scripts/inserver/libnode.sh',
  },
];

/** The repository: a relative path in the list is one inside it, wherever npm test runs from. */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The first place a requirement is looked for at: its variable's value when set, else its own path (absolute). */
export function pathOf(requirement, env) {
  return placesOf(requirement, env)[0];
}

/** Every place a requirement may be: where its variable points, else its path and its others. */
export function placesOf(requirement, env) {
  const override = requirement.env ? env[requirement.env] : undefined;
  if (override) return [override];
  return [requirement.path, ...(requirement.also ?? [])].map((place) => resolve(ROOT, place));
}

function isOverridden(requirement, env) {
  return Boolean(requirement.env && env[requirement.env]);
}

/**
 * What to do, from the probes alone (each injected, so that the choice is tested
 * without touching the machine):
 * - `ready`: nothing is missing;
 * - `install`: root with apt-get, every missing program comes from a package;
 * - `stop`: tell the user the line to run. A variable that names a missing binary
 *   always stops: installing Debian's package would not put a program at the
 *   path the variable names, so the install would change nothing the tests use.
 */
export function plan(list, { exists, env, isRoot, hasAptGet }) {
  const missing = list.filter((requirement) => !placesOf(requirement, env).some(exists));
  if (missing.length === 0) return { action: 'ready', missing, packages: [], scripts: [], overridden: [] };
  const overridden = missing.filter((requirement) => isOverridden(requirement, env));
  const installable = missing.filter((requirement) => !isOverridden(requirement, env));
  const packages = [...new Set(installable.filter((r) => !r.script).map(({ debian }) => debian))];
  const scripts = [...new Set(installable.filter((r) => r.script).map(({ script }) => script))];
  const action = overridden.length === 0 && isRoot && hasAptGet ? 'install' : 'stop';
  return { action, missing, packages, scripts, overridden };
}

/** The one line that installs the packages: without sudo for root. */
export function installLine(packages, isRoot) {
  const sudo = isRoot ? '' : 'sudo ';
  return `${sudo}apt-get update && ${sudo}apt-get install -y ${packages.join(' ')}`;
}

/** One line per package installed: which package, for what, and where it was looked for. */
export function installNotices(missing, context) {
  // Only a list no variable points elsewhere is installed: each is looked for at its own path.
  return missing.map(
    (requirement) =>
      `${context}: installing ${requirement.debian} with ${requirement.script ?? 'apt-get'}: ${requirement.what}, ` +
      `not found at ${placesOf(requirement, {}).join(' or ')}`,
  );
}

/** The lines printed when the suite cannot go on. */
export function stopMessage({ missing, packages, scripts = [], overridden }, { env, isRoot, context }) {
  const lines = [`${context}: the tests need programs this machine does not have:`];
  for (const requirement of missing) lines.push(`  - ${requirement.what}: ${placesOf(requirement, env).join(' or ')}`);
  for (const { env: name, path, debian } of overridden) {
    lines.push(
      `${name}=${env[name]} names no program: unset it to use ${path} (Debian's ${debian}), or point it at one.`,
    );
  }
  if (packages.length > 0) lines.push(`Install them (Debian/Ubuntu): ${installLine(packages, isRoot)}`);
  for (const script of scripts) lines.push(`${packages.length > 0 ? 'and' : 'Install with'}: bash ${script}`);
  if (packages.length + scripts.length > 0 && !isRoot) lines.push('(run as root, npm test installs them itself)');
  return lines;
}

function onPath(program, env) {
  return (env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, program)));
}

/** The machine's own probes. */
export function machineProbes(env = process.env) {
  return {
    exists: existsSync,
    env,
    isRoot: process.getuid?.() === 0,
    hasAptGet: onPath('apt-get', env),
  };
}

/** Runs apt-get (found on the probes' PATH); true when it succeeded. */
export function aptGet(args, env = process.env) {
  const run = spawnSync('apt-get', ['-qq', ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return run.status === 0;
}

/** Runs one of the project's install scripts (its output is for the tests; its errors shown); true when it succeeded. */
export function projectScript(script) {
  return spawnSync('bash', [resolve(ROOT, script)], { stdio: ['ignore', 'ignore', 'inherit'] }).status === 0;
}

/**
 * Makes sure the programs are there, installing them when it can (once: one
 * `apt-get update`, one `apt-get install`, each project script once, then a
 * second look). Returns true when they all are; false after printing what to do.
 */
export function ensurePrograms(
  list,
  {
    context,
    probes = machineProbes(),
    log = console.error,
    install = (args) => aptGet(args, probes.env),
    runScript = projectScript,
  } = {},
) {
  const first = plan(list, probes);
  if (first.action === 'ready') return true;
  const fail = (decision) => {
    for (const line of stopMessage(decision, { ...probes, context })) log(line);
    return false;
  };
  if (first.action === 'stop') return fail(first);
  for (const line of installNotices(first.missing, context)) log(line);
  if (!install(['update']) || (first.packages.length > 0 && !install(['install', '-y', ...first.packages]))) {
    log(`${context}: apt-get could not install ${first.packages.join(' ')} (its errors above)`);
    return fail(first);
  }
  for (const script of first.scripts) {
    if (runScript(script)) continue;
    log(`${context}: ${script} could not install what it provides (its errors above)`);
    return fail(first);
  }
  const second = plan(list, probes);
  if (second.action === 'ready') return true;
  // Installed, still not where the tests look: stop, never install again.
  log(`${context}: installed ${[...first.packages, ...first.scripts].join(' ')}, yet these are still missing:`);
  return fail({ ...second, action: 'stop' });
}

function main(args) {
  const probes = machineProbes();
  if (args.includes('--missing-packages')) {
    console.log(plan(requirements, probes).packages.join(' '));
    return;
  }
  if (!ensurePrograms(requirements, { context: 'npm test', probes })) {
    console.error('0 passed, 1 failed');
    process.exit(1);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
