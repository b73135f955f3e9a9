// Typed view of the compiled addon (built here, or prebuilt: see addon-location.ts).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

import { HeaderValueError, type Identity, type NormalizeOptions, type NormalizedHeaders } from '../core/identity.js';
import { locateAddon } from './addon-location.js';
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

/** Where the addon is looked for, once per process (addon-location.ts). */
export const ADDON_LOCATION = locateAddon();

/** The addon's file: GATEHOUSE_NATIVE_ADDON, a build of this machine's own, or the prebuilt one that fits. */
export const ADDON_PATH = ADDON_LOCATION.path;

/** Loads the addon; throws with the reason when it is missing, broken or of another ABI. */
export function loadAddonCore(addonPath: string = ADDON_PATH): GatehouseCore {
  if (addonPath === ADDON_PATH && ADDON_LOCATION.problem !== undefined) {
    throw new Error(
      `native addon not found: ${ADDON_LOCATION.problem} (run npm run build, or see the README's Install section)`,
    );
  }
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
