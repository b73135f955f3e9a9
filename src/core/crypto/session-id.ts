// Session identifiers: 256 random bits, carried in the cookie with an HMAC so
// that forged or mangled cookies are rejected before any store lookup.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** A fresh session id from the CSPRNG (43 base64url characters). */
export function newSessionId(): string {
  return randomBytes(32).toString('base64url');
}

function mac(key: Buffer, id: string): Buffer {
  return createHmac('sha256', key).update(id).digest();
}

/** The cookie value: `<id>.<hmac>`. */
export function signSessionId(key: Buffer, id: string): string {
  return `${id}.${mac(key, id).toString('base64url')}`;
}

/** The session id in a cookie value, or null when it is malformed or its MAC does not match (constant time). */
export function verifySessionCookie(key: Buffer, value: string): string | null {
  const dot = value.indexOf('.');
  if (dot !== 43 || value.length !== 87) return null;
  const id = value.slice(0, dot);
  const given = value.slice(dot + 1);
  if (!ID_PATTERN.test(id) || !ID_PATTERN.test(given)) return null;
  const expected = mac(key, id);
  const received = Buffer.from(given, 'base64url');
  // Only the canonical spelling: the last character's low bits are padding, and a
  // second spelling of one MAC would let a cookie change and still verify.
  if (received.toString('base64url') !== given) return null;
  return received.length === expected.length && timingSafeEqual(received, expected) ? id : null;
}
