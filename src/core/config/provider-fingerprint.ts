import { createHash } from 'node:crypto';

/**
 * A digest of what identifies a provider's configuration (client id, issuer, audiences, signing
 * metadata): a session signed in under another fingerprint must sign in again.
 */
export function fingerprint(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}
