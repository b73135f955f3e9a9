// Where the compiled addon is found. In this order:
//   1. GATEHOUSE_NATIVE_ADDON: a build kept elsewhere (one exact file);
//   2. build/Release/gatehouse_native.node below the package root: built on this machine (a
//      checkout's npm install, or an installed package's build from source);
//   3. the prebuilt addon the package ships for this machine, in prebuildify's layout
//      (prebuilds/<platform>-<arch>/node.napi[.glibc|.musl].node), chosen by node-gyp-build as
//      it chooses for any prebuildify package: platform, architecture, then the C library.
// A build of this machine's own comes before a prebuilt one, as node-gyp-build orders them; it is
// named exactly because build/Release also holds the native test hosts of a checkout, and
// node-gyp-build would take whichever .node file it listed first.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: src/native and dist/native are both two levels down. */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where a build on this machine puts the addon. */
export const BUILT_ADDON_PATH = path.join(PACKAGE_ROOT, 'build', 'Release', 'gatehouse_native.node');

export interface AddonLocation {
  /** The file to load; where a build would put it when none is found. */
  readonly path: string;
  readonly source: 'environment' | 'built' | 'prebuilt' | 'none';
  /** When none is found: what was looked for. */
  readonly problem?: string;
}

interface NodeGypBuild {
  path(directory: string): string;
}

/** node-gyp-build's choice among the prebuilt addons, or why there is none. */
function prebuiltAddon(root: string): { path: string } | { problem: string } {
  const nodeGypBuild = createRequire(import.meta.url)('node-gyp-build') as NodeGypBuild;
  try {
    const chosen = nodeGypBuild.path(root);
    // Its own first choice is any .node file under build/: not the addon when step 2 did not find it.
    if (chosen.startsWith(path.join(root, 'build') + path.sep)) {
      return {
        problem: `no prebuilt addon for ${process.platform}-${process.arch} in ${path.join(root, 'prebuilds')}`,
      };
    }
    return { path: chosen };
  } catch (error) {
    // "No native build was found for platform=… arch=… libc=…": its first line says what was looked for.
    const detail = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    return { problem: `no prebuilt addon fits (${detail})` };
  }
}

export function locateAddon(env: NodeJS.ProcessEnv = process.env, root: string = PACKAGE_ROOT): AddonLocation {
  if (env.GATEHOUSE_NATIVE_ADDON) return { path: env.GATEHOUSE_NATIVE_ADDON, source: 'environment' };
  const built = path.join(root, 'build', 'Release', 'gatehouse_native.node');
  if (existsSync(built)) return { path: built, source: 'built' };
  const prebuilt = prebuiltAddon(root);
  if ('path' in prebuilt) return { path: prebuilt.path, source: 'prebuilt' };
  return { path: built, source: 'none', problem: `not built at ${built}, and ${prebuilt.problem}` };
}
