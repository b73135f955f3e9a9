// The deployment's encryption key and the purpose-bound keys derived from it.
import { hkdfSync } from 'node:crypto';

export class EncryptionKeyError extends Error {}

/** Environment variables that may hold the master key, first match wins. */
export const ENCRYPTION_KEY_VARIABLES = ['GATEHOUSE_ENCRYPTION_KEY', 'WEBSITE_AUTH_ENCRYPTION_KEY'] as const;

/** 32 bytes given as 64 hex digits or as base64/base64url. */
export function parseEncryptionKey(text: string, source: string): Buffer {
  const trimmed = text.trim();
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) key = Buffer.from(trimmed, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) key = Buffer.from(trimmed, 'base64');
  if (key?.length !== 32) {
    throw new EncryptionKeyError(`${source} must be 32 bytes: 64 hex digits or 44 base64 characters`);
  }
  return key;
}

/** The master key from the environment, or undefined when none is set. */
export function encryptionKeyFromEnv(env: NodeJS.ProcessEnv = process.env): Buffer | undefined {
  for (const variable of ENCRYPTION_KEY_VARIABLES) {
    const value = env[variable];
    if (value !== undefined && value !== '') return parseEncryptionKey(value, variable);
  }
  return undefined;
}

export type KeyPurpose =
  'session-cookie' | 'login-transaction' | 'token-store' | 'token-store-names' | 'authentication-token';

/**
 * A 32-byte key for one purpose (HKDF-SHA256), so that no two uses share a
 * key: a value sealed for one purpose never opens under another.
 */
export function deriveKey(master: Buffer, purpose: KeyPurpose, scope = ''): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `gatehouse ${purpose} ${scope}`, 32));
}
