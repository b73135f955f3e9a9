// Typed view of the compiled addon (build/Release/gatehouse_native.node).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { HeaderValueError, type Identity, type NormalizeOptions, type NormalizedHeaders } from '../core/identity.js';
import type { GatehouseCore, Secret, SignatureHeader, SignatureVerifier } from './types.js';

/** The C ABI version this TypeScript was written against (GH_ABI_VERSION). */
export const EXPECTED_ABI_VERSION = 4;

interface AddonExports {
  abiVersion: number;
  verifySignature(secrets: ReadonlyArray<Secret>, body: Uint8Array, header: SignatureHeader): boolean;
  Verifier: new (secrets: ReadonlyArray<Secret>) => SignatureVerifier;
  normalizeHeaders(
    inbound: ReadonlyArray<readonly [string, string]>,
    identity: Identity | null,
    options?: NormalizeOptions,
  ): NormalizedHeaders;
}

/**
 * Where the addon is loaded from: GATEHOUSE_NATIVE_ADDON when set (a build
 * kept elsewhere), else build/Release below the package root (src/native and
 * dist/native are both two levels down).
 */
export const ADDON_PATH = process.env.GATEHOUSE_NATIVE_ADDON || path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'build',
  'Release',
  'gatehouse_native.node',
);

/** Loads the addon; throws with the reason when it is missing, broken or of another ABI. */
export function loadAddonCore(addonPath: string = ADDON_PATH): GatehouseCore {
  if (!existsSync(addonPath)) throw new Error(`native addon not found at ${addonPath} (run npm run build)`);
  const addon = createRequire(import.meta.url)(addonPath) as AddonExports;
  if (addon.abiVersion !== EXPECTED_ABI_VERSION) {
    throw new Error(`native addon ABI ${addon.abiVersion}, expected ${EXPECTED_ABI_VERSION} (rebuild it)`);
  }
  return {
    kind: 'native',
    verifySignature: (secrets, body, header) => addon.verifySignature(secrets, body, header),
    createVerifier: (secrets) => new addon.Verifier(secrets),
    normalizeHeaders(inbound, identity, options) {
      try {
        return addon.normalizeHeaders(inbound, identity, options);
      } catch (error) {
        // One error class whichever implementation runs.
        if ((error as { code?: unknown }).code === 'ERR_GH_FORBIDDEN_CHARACTER') throw new HeaderValueError();
        throw error;
      }
    },
  };
}
