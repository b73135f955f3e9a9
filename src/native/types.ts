import type { Identity, NormalizeOptions, NormalizedHeaders } from '../core/identity.js';

export type SignatureHeader = string | Uint8Array | undefined | null;
export type Secret = string | Uint8Array;

/** Secrets keyed once, reused for every delivery. */
export interface SignatureVerifier {
  /** True when `header` is `sha256=<hex>` of HMAC-SHA256(body) under any secret. */
  verify(body: Uint8Array, header: SignatureHeader): boolean;
}

/**
 * The shared core functions, implemented twice with identical behaviour: by
 * the C++ addon and by a pure-TypeScript fallback.
 */
export interface GatehouseCore {
  readonly kind: 'native' | 'fallback';
  verifySignature(secrets: ReadonlyArray<Secret>, body: Uint8Array, header: SignatureHeader): boolean;
  createVerifier(secrets: ReadonlyArray<Secret>): SignatureVerifier;
  normalizeHeaders(
    inbound: ReadonlyArray<readonly [string, string]>,
    identity: Identity | null,
    options?: NormalizeOptions,
  ): NormalizedHeaders;
}
