// The lockfile of an app that depends on the packed tarball alone, so that `npm install --offline`
// can install it from the npm cache. The cache holds every package the checkout installed, but by
// tarball, not the registry's documents that resolving a version range needs: the app's lockfile
// therefore pins what the checkout's own lockfile pinned (every package that is not a development
// dependency of the checkout), with the registry's tarball address npm's cache knows them by.
import { createHash } from 'node:crypto';

interface LockedPackage {
  readonly version?: string;
  readonly name?: string;
  readonly dev?: boolean;
  readonly link?: boolean;
  readonly [field: string]: unknown;
}

export interface Lockfile {
  readonly name: string;
  readonly lockfileVersion: 3;
  readonly requires: true;
  readonly packages: Readonly<Record<string, LockedPackage>>;
}

/** The package's manifest fields a lockfile repeats. */
export interface PackedManifest {
  readonly name: string;
  readonly version: string;
  readonly license?: string;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly peerDependenciesMeta?: Readonly<Record<string, unknown>>;
  readonly bin?: Readonly<Record<string, string>>;
  readonly engines?: Readonly<Record<string, string>>;
}

const REGISTRY = 'https://registry.npmjs.org';

/** The name of a lockfile key's package: the part after its last node_modules/. */
function packageName(key: string, entry: LockedPackage): string {
  return entry.name ?? key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

/** Where Node finds `dependency` from the package at `from`: its own node_modules, then each parent's. */
function resolvedKey(checkout: Lockfile, from: string, dependency: string): string | undefined {
  for (let base = from; ; base = base.slice(0, Math.max(0, base.lastIndexOf('/node_modules/')))) {
    const key = `${base === '' ? '' : `${base}/`}node_modules/${dependency}`;
    if (checkout.packages[key] !== undefined) return key;
    if (base === '') return undefined;
  }
}

/** The checkout's entries for `names` and everything they depend on (lockfile keys). */
function closure(checkout: Lockfile, names: readonly string[]): Set<string> {
  const keys = new Set<string>();
  const pending = names.map((name) => `node_modules/${name}`);
  while (pending.length > 0) {
    const key = pending.pop()!;
    if (keys.has(key) || checkout.packages[key] === undefined) continue;
    keys.add(key);
    const dependencies = (checkout.packages[key]!.dependencies ?? {}) as Record<string, string>;
    for (const dependency of Object.keys(dependencies)) {
      const found = resolvedKey(checkout, key, dependency);
      if (found !== undefined) pending.push(found);
    }
  }
  return keys;
}

/**
 * `devDependencies`: packages of the checkout the app also installs (as the README tells an app to
 * for a build from source), at the checkout's versions.
 */
export function appLockfile(checkout: Lockfile, manifest: PackedManifest, tarballFile: string, tarball: Buffer, devDependencies: readonly string[] = []): Lockfile {
  const spec = `file:${tarballFile}`;
  const extra = closure(checkout, devDependencies);
  const devSpecs = Object.fromEntries(devDependencies.map((name) => [name, `^${checkout.packages[`node_modules/${name}`]!.version}`]));
  const packages: Record<string, LockedPackage> = {
    '': { name: 'app', dependencies: { [manifest.name]: spec }, ...(devDependencies.length > 0 ? { devDependencies: devSpecs } : {}) },
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
    const basename = name.split('/').pop()!;
    packages[key] = { ...entry, resolved: `${REGISTRY}/${name}/-/${basename}-${entry.version}.tgz` };
  }
  return { name: 'app', lockfileVersion: 3, requires: true, packages };
}

/** The app's package.json that goes with appLockfile. */
export function appManifest(lockfile: Lockfile): Record<string, unknown> {
  const { name: _name, ...fields } = lockfile.packages['']!;
  return { name: 'app', private: true, ...fields };
}
