// Pure-TypeScript twin of the C++ core (binding/core). Every rule here must
// match the C++ byte for byte; test/vectors/ runs both against the same cases.
import { createHmac, timingSafeEqual } from 'node:crypto';

import {
  DEFAULT_HEADER_PREFIX,
  HeaderValueError,
  type Identity,
  type NormalizeOptions,
  type NormalizedHeaders,
} from '../core/identity.js';
import { APP_SERVICE_PREFIX, canonicalHeaderName, namesIdentityUnder } from '../core/http/header-policy.js';
import type { GatehouseCore, Secret, SignatureHeader, SignatureVerifier } from './types.js';

const SIGNATURE_PREFIX = Buffer.from('sha256=', 'latin1');
const SIGNATURE_LENGTH = SIGNATURE_PREFIX.length + 64;
const HEADER_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FORBIDDEN_VALUE_CHARACTER = /[\r\n\0]/;

function utf8(value: string | Uint8Array): Buffer {
  return typeof value === 'string'
    ? Buffer.from(value, 'utf8')
    : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function requireBytes(value: unknown, what: string): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new TypeError(`${what} must be a Buffer or Uint8Array`);
  return value;
}

function secretBytes(secrets: unknown): Buffer[] {
  if (!Array.isArray(secrets)) throw new TypeError('secrets must be an array of strings or Buffers');
  return secrets.map((secret: unknown) => {
    if (typeof secret !== 'string' && !(secret instanceof Uint8Array)) {
      throw new TypeError('secret must be a string or Buffer');
    }
    return utf8(secret);
  });
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x61 + 10;
  return -1; // upper case is refused: the format is lower-case hex
}

/** The 32 digest bytes of a well-formed header, else null. The shape is public; only the digest is compared in constant time. */
function parseSignatureHeader(header: SignatureHeader): Buffer | null {
  if (header === undefined || header === null) return null;
  if (typeof header !== 'string' && !(header instanceof Uint8Array)) {
    throw new TypeError('signature header must be a string or Buffer');
  }
  const bytes = utf8(header);
  if (bytes.length !== SIGNATURE_LENGTH || !bytes.subarray(0, SIGNATURE_PREFIX.length).equals(SIGNATURE_PREFIX)) {
    return null;
  }
  const digest = Buffer.allocUnsafe(32);
  for (let i = 0; i < 32; i++) {
    const high = hexValue(bytes[SIGNATURE_PREFIX.length + 2 * i]!);
    const low = hexValue(bytes[SIGNATURE_PREFIX.length + 2 * i + 1]!);
    if (high < 0 || low < 0) return null;
    digest[i] = (high << 4) | low;
  }
  return digest;
}

class FallbackVerifier implements SignatureVerifier {
  readonly #keys: Buffer[];

  constructor(secrets: ReadonlyArray<Secret>) {
    this.#keys = secretBytes(secrets).filter((key) => key.length > 0); // an empty secret never matches
  }

  verify(body: Uint8Array, header: SignatureHeader): boolean {
    requireBytes(body, 'body');
    const received = parseSignatureHeader(header);
    if (received === null) return false;
    let matches = false;
    for (const key of this.#keys) {
      const expected = createHmac('sha256', key).update(body).digest();
      // Evaluate the comparison first: no short-circuit, every secret costs the same.
      matches = timingSafeEqual(expected, received) || matches;
    }
    return matches;
  }
}

/** Node's http layer writes string characters as latin1 bytes; this carries UTF-8 through it. */
function byteString(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

function providerHeaderPart(provider: string): string {
  let out = '';
  for (const byte of Buffer.from(provider, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[0-9A-Za-z]/.test(c) ? c.toUpperCase() : '-';
  }
  return out;
}

function stringField(object: Record<string, unknown>, key: string, path: string): string {
  const value = object[key];
  if (typeof value !== 'string') throw new TypeError(`${path}.${key} must be a string`);
  return value;
}

function optionalToken(tokens: Record<string, unknown>, key: string): string | undefined {
  const value = tokens[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new TypeError(`identity.tokens.${key} must be a string`);
  return value;
}

/** JSON.stringify escapes lone surrogates; the C++ side sees U+FFFD. Make both see U+FFFD. */
function wellFormed(text: string): string {
  return text.toWellFormed();
}

function encodePrincipal(identity: Record<string, unknown>, claims: Array<{ typ: string; val: string }>): string {
  const principal = {
    auth_typ: wellFormed(stringField(identity, 'authType', 'identity')),
    claims: claims.map((claim) => ({ typ: wellFormed(claim.typ), val: wellFormed(claim.val) })),
    name_typ: wellFormed(stringField(identity, 'nameType', 'identity')),
    role_typ: wellFormed(stringField(identity, 'roleType', 'identity')),
  };
  return Buffer.from(JSON.stringify(principal), 'utf8').toString('base64');
}

function normalizeHeaders(
  inbound: ReadonlyArray<readonly [string, string]>,
  identity: Identity | null,
  options: NormalizeOptions = {},
): NormalizedHeaders {
  if (!Array.isArray(inbound)) throw new TypeError('inbound must be an array of [name, value]');
  const pairs = inbound.map((pair: unknown) => {
    if (!Array.isArray(pair)) throw new TypeError('inbound must be an array of [name, value]');
    const [name, value] = pair as unknown[];
    if (typeof name !== 'string' || typeof value !== 'string') {
      throw new TypeError('inbound header names and values must be strings');
    }
    return [name, value] as const;
  });

  let identityFields: {
    object: Record<string, unknown>;
    claims: Array<{ typ: string; val: string }>;
    tokens: Record<string, string | undefined>;
  } | null = null;
  if (identity !== undefined && identity !== null) {
    if (typeof identity !== 'object') throw new TypeError('identity must be an object or null');
    const object = identity as unknown as Record<string, unknown>;
    for (const key of ['provider', 'userId', 'userName', 'authType', 'nameType', 'roleType']) {
      stringField(object, key, 'identity');
    }
    if (!Array.isArray(object.claims)) throw new TypeError('identity.claims must be an array');
    const claims = (object.claims as unknown[]).map((claim) => {
      if (typeof claim !== 'object' || claim === null) throw new TypeError('identity.claims[] must be {typ, val}');
      const { typ, val } = claim as Record<string, unknown>;
      if (typeof typ !== 'string' || typeof val !== 'string') {
        throw new TypeError('identity.claims[] typ and val must be strings');
      }
      return { typ, val };
    });
    let tokens: Record<string, string | undefined> = {};
    const rawTokens = object.tokens;
    if (rawTokens !== undefined && rawTokens !== null) {
      if (typeof rawTokens !== 'object') throw new TypeError('identity.tokens must be an object');
      const t = rawTokens as Record<string, unknown>;
      tokens = {
        accessToken: optionalToken(t, 'accessToken'),
        idToken: optionalToken(t, 'idToken'),
        expiresOn: optionalToken(t, 'expiresOn'),
        refreshToken: optionalToken(t, 'refreshToken'),
        accessTokenSecret: optionalToken(t, 'accessTokenSecret'),
      };
    }
    identityFields = { object, claims, tokens };
  }

  let prefixText = DEFAULT_HEADER_PREFIX;
  if (options.prefix !== undefined) {
    if (typeof options.prefix !== 'string') throw new TypeError('options.prefix must be a string');
    if (options.prefix !== '') prefixText = options.prefix;
  }
  if (!HEADER_TOKEN.test(prefixText)) throw new TypeError('header prefix must be a non-empty header token');
  const prefix = canonicalHeaderName(prefixText);
  const exposeTokens = options.exposeTokens === undefined ? true : Boolean(options.exposeTokens);

  const remove: string[] = [];
  for (const [name, value] of pairs) {
    const canonical = canonicalHeaderName(name);
    const strip =
      namesIdentityUnder(canonical, prefix) ||
      namesIdentityUnder(canonical, APP_SERVICE_PREFIX) ||
      FORBIDDEN_VALUE_CHARACTER.test(value);
    const bytes = byteString(name);
    if (strip && !remove.includes(bytes)) remove.push(bytes);
  }
  if (identityFields === null) return { remove, set: [] };

  const { object, claims, tokens } = identityFields;
  const set: Array<[string, string]> = [];
  const add = (name: string, value: string): void => {
    if (FORBIDDEN_VALUE_CHARACTER.test(value)) throw new HeaderValueError();
    set.push([name, byteString(value)]);
  };
  const principalName = `${prefix}CLIENT-PRINCIPAL`;
  add(principalName, encodePrincipal(object, claims));
  add(`${principalName}-ID`, object.userId as string);
  add(`${principalName}-NAME`, object.userName as string);
  add(`${principalName}-IDP`, object.provider as string);
  if (exposeTokens) {
    const tokenPrefix = `${prefix}TOKEN-${providerHeaderPart(object.provider as string)}-`;
    const entries: Array<[string, string | undefined]> = [
      ['ACCESS-TOKEN', tokens.accessToken],
      ['ID-TOKEN', tokens.idToken],
      ['EXPIRES-ON', tokens.expiresOn],
      ['REFRESH-TOKEN', tokens.refreshToken],
      ['ACCESS-TOKEN-SECRET', tokens.accessTokenSecret],
    ];
    for (const [suffix, value] of entries) {
      if (value !== undefined) add(tokenPrefix + suffix, value);
    }
  }
  return { remove, set };
}

export const fallbackCore: GatehouseCore = {
  kind: 'fallback',
  verifySignature(secrets, body, header) {
    return new FallbackVerifier(secrets).verify(body, header);
  },
  createVerifier(secrets) {
    return new FallbackVerifier(secrets);
  },
  normalizeHeaders,
};
