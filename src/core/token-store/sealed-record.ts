// How a stored record is sealed, whatever holds it (a file, a Redis key):
// AES-256-GCM under the store's data key, with the record's name in the store
// and its expiry as associated data, so a record copied over another's, or an
// edited expiry, does not open and counts as absent.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const FORMAT = 1;

/** A sealed record as stored (JSON). */
export interface SealedRecord {
  readonly format: number;
  readonly expiresAt: number;
  readonly iv: string;
  readonly tag: string;
  readonly data: string;
}

function associatedData(name: string, expiresAt: number): Buffer {
  return Buffer.from(`gatehouse-token-store:${FORMAT}:${name}:${expiresAt}`);
}

export function sealRecord(key: Buffer, name: string, record: unknown, expiresAt: number): SealedRecord {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(associatedData(name, expiresAt));
  const data = Buffer.concat([cipher.update(JSON.stringify(record), 'utf8'), cipher.final()]);
  return {
    format: FORMAT,
    expiresAt,
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
}

/** The stored text as a sealed record, or undefined when it is not one (truncated, edited, another format). */
export function parseSealedRecord(text: string): SealedRecord | undefined {
  try {
    const value = JSON.parse(text) as Partial<SealedRecord>;
    if (
      value.format === FORMAT &&
      typeof value.expiresAt === 'number' &&
      typeof value.iv === 'string' &&
      typeof value.tag === 'string' &&
      typeof value.data === 'string'
    ) {
      return value as SealedRecord;
    }
  } catch {
    // fall through: unparseable
  }
  return undefined;
}

/** The record, or undefined when it does not open under this key and name (tampered, moved, another key). */
export function openRecord<T>(key: Buffer, name: string, sealed: SealedRecord): T | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(associatedData(name, sealed.expiresAt));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    const plain = Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]);
    return JSON.parse(plain.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}
