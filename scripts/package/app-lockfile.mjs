// The lockfile of an app that depends on gatehouse's packed tarball alone, so that
// `npm install --offline` installs it from the npm cache: the cache holds every package this
// checkout installed, by tarball, but not the registry's documents that resolving a version range
// needs. The app's lockfile pins what the checkout's own lockfile pinned (every package that is not
// a development dependency of the checkout, and the closure of `devDependencies` asked for), with
// the registry's tarball address npm's cache knows each one by. Used by the package test and by the
// container build.
//   node scripts/package/app-lockfile.mjs <tarball> <app directory>   writes package.json and package-lock.json
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REGISTRY = 'https://registry.npmjs.org';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The name of a lockfile key's package: the part after its last node_modules/. */
function packageName(key, entry) {
  return entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

/** Where Node finds `dependency` from the package at `from`: its own node_modules, then each parent's. */
function resolvedKey(checkout, from, dependency) {
  for (let base = from; ; base = base.slice(0, Math.max(0, base.lastIndexOf('/node_modules/')))) {
    const key = `${base === '' ? '' : `${base}/`}node_modules/${dependency}`;
    if (checkout.packages[key] !== undefined) return key;
    if (base === '') return undefined;
  }
}

/** The checkout's entries for `names` and everything they depend on (lockfile keys). */
function closure(checkout, names) {
  const keys = new Set();
  const pending = names.map((name) => `node_modules/${name}`);
  while (pending.length > 0) {
    const key = pending.pop();
    if (keys.has(key) || checkout.packages[key] === undefined) continue;
    keys.add(key);
    for (const dependency of Object.keys(checkout.packages[key].dependencies ?? {})) {
      const found = resolvedKey(checkout, key, dependency);
      if (found !== undefined) pending.push(found);
    }
  }
  return keys;
}

export function appLockfile(checkout, manifest, tarballFile, tarball, devDependencies = []) {
  const spec = `file:${tarballFile}`;
  const extra = closure(checkout, devDependencies);
  const devSpecs = Object.fromEntries(
    devDependencies.map((name) => [name, `^${checkout.packages[`node_modules/${name}`].version}`]),
  );
  const packages = {
    '': {
      name: 'app',
      dependencies: { [manifest.name]: spec },
      ...(devDependencies.length > 0 ? { devDependencies: devSpecs } : {}),
    },
    [`node_modules/${manifest.name}`]: {
      version: manifest.version,
      resolved: spec,
      integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
      hasInstallScript: true,
      license: manifest.license,
      dependencies: manifest.dependencies,
      peerDependencies: manifest.peerDependencies,
      peerDependenciesMeta: manifest.peerDependenciesMeta,
      bin: manifest.bin,
      engines: manifest.engines,
    },
  };
  for (const [key, entry] of Object.entries(checkout.packages)) {
    if (key === '' || entry.link === true || (entry.dev === true && !extra.has(key))) continue;
    const name = packageName(key, entry);
    packages[key] = { ...entry, resolved: `${REGISTRY}/${name}/-/${name.split('/').pop()}-${entry.version}.tgz` };
  }
  return { name: 'app', lockfileVersion: 3, requires: true, packages };
}

/** The app's package.json that goes with appLockfile. */
export function appManifest(lockfile) {
  const { name: _name, ...fields } = lockfile.packages[''];
  return { name: 'app', private: true, ...fields };
}

/** Writes the app's package.json and package-lock.json beside its copy of the tarball. */
export function writeApp(directory, tarballFile, devDependencies = []) {
  const checkout = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const tarball = readFileSync(path.join(directory, tarballFile));
  const lockfile = appLockfile(checkout, manifest, tarballFile, tarball, devDependencies);
  writeFileSync(path.join(directory, 'package.json'), JSON.stringify(appManifest(lockfile), null, 2));
  writeFileSync(path.join(directory, 'package-lock.json'), JSON.stringify(lockfile, null, 2));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [tarball, directory] = process.argv.slice(2);
  if (tarball === undefined || directory === undefined) {
    console.error('usage: node scripts/package/app-lockfile.mjs <tarball file name> <app directory holding it>');
    process.exit(2);
  }
  writeApp(directory, tarball);
}
