// Chooses the core implementation: the C++ addon when it loads, else the
// TypeScript fallback. GATEHOUSE_NATIVE=require|off|auto (default auto).
import { ADDON_LOCATION, loadAddonCore } from './addon.js';
import { fallbackCore } from './fallback.js';
import type { Logger } from '../logging.js';
import type { GatehouseCore } from './types.js';

export type NativeMode = 'auto' | 'require' | 'off';

export interface CoreSelection {
  readonly core: GatehouseCore;
  /** Why the fallback is active, when it is. */
  readonly fallbackReason?: string;
}

export function nativeModeFromEnv(env: NodeJS.ProcessEnv = process.env): NativeMode {
  const raw = (env.GATEHOUSE_NATIVE ?? 'auto').trim().toLowerCase();
  if (raw === '' || raw === 'auto') return 'auto';
  if (raw === 'require' || raw === 'off') return raw;
  throw new Error(`GATEHOUSE_NATIVE must be one of auto, require, off (got ${JSON.stringify(env.GATEHOUSE_NATIVE)})`);
}

export function selectCore(mode: NativeMode = nativeModeFromEnv()): CoreSelection {
  if (mode === 'off') return { core: fallbackCore, fallbackReason: 'GATEHOUSE_NATIVE=off' };
  try {
    return { core: loadAddonCore() };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (mode === 'require')
      throw new Error(`GATEHOUSE_NATIVE=require but the native addon cannot load: ${reason}`, { cause: error });
    return { core: fallbackCore, fallbackReason: reason };
  }
}

/** Says, once at startup, which implementation serves this process. */
export function logActiveCore(logger: Logger, selection: CoreSelection): void {
  // addon: environment, built (on this machine) or prebuilt (shipped in the package).
  if (selection.fallbackReason === undefined)
    logger.info({ core: 'native', addon: ADDON_LOCATION.source }, 'core: C++ addon active');
  else logger.warn({ core: 'fallback', reason: selection.fallbackReason }, 'core: TypeScript fallback active');
}

let defaultSelection: CoreSelection | undefined;

/** The process-wide core, selected once from the environment. */
export function defaultCore(): CoreSelection {
  defaultSelection ??= selectCore();
  return defaultSelection;
}

export { fallbackCore } from './fallback.js';
export { loadAddonCore } from './addon.js';
export type { GatehouseCore, Secret, SignatureHeader, SignatureVerifier } from './types.js';
