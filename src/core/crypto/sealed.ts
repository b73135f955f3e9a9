// Small encrypted, authenticated, expiring values (AES-256-GCM), e.g. the
// login transaction cookie: state, nonce and PKCE verifier travel with the
// browser, so any instance can finish a login, and nobody can read or alter them.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

interface Envelope<T> {
  readonly exp: number;
  readonly v: T;
}

/**
 * Seals `value` (JSON) until `expiresAt` (ms since epoch). `label` is bound
 * as associated data: a value sealed under one label never opens under another.
 */
export function seal<T>(key: Buffer, label: string, value: T, expiresAt: number): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`${VERSION}:${label}`));
  const plaintext = Buffer.from(JSON.stringify({ exp: expiresAt, v: value } satisfies Envelope<T>));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, ciphertext, cipher.getAuthTag()]).toString('base64url');
}

export type Unsealed<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly reason: 'malformed' | 'forged' | 'expired' };

/** Opens a sealed value; any tampering, another key or label, or expiry fails. */
export function unseal<T>(key: Buffer, label: string, sealed: string, now: number = Date.now()): Unsealed<T> {
  if (sealed.length > 8192 || !/^[A-Za-z0-9_-]+$/.test(sealed)) return { ok: false, reason: 'malformed' };
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length < 1 + IV_BYTES + TAG_BYTES || bytes[0] !== VERSION) return { ok: false, reason: 'malformed' };
  const iv = bytes.subarray(1, 1 + IV_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  const ciphertext = bytes.subarray(1 + IV_BYTES, bytes.length - TAG_BYTES);
  let plaintext: Buffer;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(`${VERSION}:${label}`));
    decipher.setAuthTag(tag);
    plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch {
    return { ok: false, reason: 'forged' };
  }
  let envelope: Envelope<T>;
  try {
    envelope = JSON.parse(plaintext.toString('utf8')) as Envelope<T>;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (typeof envelope.exp !== 'number' || envelope.exp <= now) return { ok: false, reason: 'expired' };
  return { ok: true, value: envelope.v };
}
