import { randomBytes } from 'node:crypto';

import { expect } from 'chai';

import {
  deriveKey,
  encryptionKeyFromEnv,
  EncryptionKeyError,
  parseEncryptionKey,
} from '../../../src/core/crypto/keys.js';
import { seal, unseal } from '../../../src/core/crypto/sealed.js';
import { newSessionId, signSessionId, verifySessionCookie } from '../../../src/core/crypto/session-id.js';

const master = randomBytes(32);

describe('encryption keys', () => {
  it('accepts 64 hex digits or base64 of 32 bytes, from either variable', () => {
    const hex = master.toString('hex');
    expect(parseEncryptionKey(hex, 'K').equals(master)).to.equal(true);
    expect(parseEncryptionKey(master.toString('base64'), 'K').equals(master)).to.equal(true);
    expect(parseEncryptionKey(master.toString('base64url'), 'K').equals(master)).to.equal(true);
    expect(encryptionKeyFromEnv({ WEBSITE_AUTH_ENCRYPTION_KEY: hex })!.equals(master)).to.equal(true);
    expect(
      encryptionKeyFromEnv({ GATEHOUSE_ENCRYPTION_KEY: hex, WEBSITE_AUTH_ENCRYPTION_KEY: '00'.repeat(32) })!.equals(
        master,
      ),
    ).to.equal(true);
    expect(encryptionKeyFromEnv({})).to.equal(undefined);
  });

  it('refuses anything else, naming the variable and never echoing the value', () => {
    for (const bad of [
      'short',
      'zz'.repeat(32),
      '0'.repeat(63),
      randomBytes(16).toString('base64'),
      `${'0'.repeat(64)}00`,
    ]) {
      expect(() => parseEncryptionKey(bad, 'GATEHOUSE_ENCRYPTION_KEY')).to.throw(
        EncryptionKeyError,
        /^GATEHOUSE_ENCRYPTION_KEY must be 32 bytes/,
      );
      try {
        parseEncryptionKey(bad, 'GATEHOUSE_ENCRYPTION_KEY');
      } catch (error) {
        expect((error as Error).message).not.to.contain(bad);
      }
    }
  });

  it('derives distinct keys per purpose and scope', () => {
    const keys = [
      deriveKey(master, 'session-cookie'),
      deriveKey(master, 'login-transaction'),
      deriveKey(master, 'token-store', 'app-a'),
      deriveKey(master, 'token-store', 'app-b'),
    ];
    expect(new Set(keys.map((k) => k.toString('hex'))).size).to.equal(4);
    expect(deriveKey(master, 'session-cookie').equals(keys[0]!)).to.equal(true);
  });
});

describe('sealed values', () => {
  const key = deriveKey(master, 'login-transaction');
  // Read when each test runs, not when the file loads: loading the whole suite can take longer than the margin.
  const inAMinute = () => Date.now() + 60_000;

  it('round-trip until they expire', () => {
    const later = inAMinute();
    const sealed = seal(key, 'tx', { state: 's', nonce: 'n' }, later);
    expect(sealed).to.match(/^[A-Za-z0-9_-]+$/);
    expect(unseal(key, 'tx', sealed)).to.deep.equal({ ok: true, value: { state: 's', nonce: 'n' } });
    expect(unseal(key, 'tx', sealed, later)).to.deep.equal({ ok: false, reason: 'expired' });
  });

  it('are unreadable: the plaintext does not appear', () => {
    const sealed = seal(key, 'tx', { secret: 'plain-marker' }, inAMinute());
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.to.contain('plain-marker');
  });

  it('are fresh each time (random IV)', () => {
    expect(seal(key, 'tx', 1, inAMinute())).not.to.equal(seal(key, 'tx', 1, inAMinute()));
  });

  it('refuse tampering, another label, another key, and garbage', () => {
    const sealed = seal(key, 'tx', { a: 1 }, inAMinute());
    const bytes = Buffer.from(sealed, 'base64url');
    for (let i = 0; i < bytes.length; i += 7) {
      const flipped = Buffer.from(bytes);
      flipped[i]! ^= 1;
      expect(unseal(key, 'tx', flipped.toString('base64url')).ok, `byte ${i}`).to.equal(false);
    }
    expect(unseal(key, 'other', sealed)).to.deep.equal({ ok: false, reason: 'forged' });
    expect(unseal(deriveKey(master, 'session-cookie'), 'tx', sealed)).to.deep.equal({ ok: false, reason: 'forged' });
    for (const junk of ['', 'abc', '!!!!', 'A'.repeat(10_000), sealed.slice(0, 20)]) {
      expect(unseal(key, 'tx', junk).ok, junk.slice(0, 10)).to.equal(false);
    }
  });
});

describe('session ids', () => {
  const key = deriveKey(master, 'session-cookie');

  it('are 256-bit CSPRNG values, distinct every time', () => {
    const ids = new Set(Array.from({ length: 1000 }, newSessionId));
    expect(ids.size).to.equal(1000);
    for (const id of ids) expect(id).to.match(/^[A-Za-z0-9_-]{43}$/);
  });

  it('verify only with their own MAC', () => {
    const id = newSessionId();
    const cookie = signSessionId(key, id);
    expect(verifySessionCookie(key, cookie)).to.equal(id);
    expect(verifySessionCookie(deriveKey(randomBytes(32), 'session-cookie'), cookie)).to.equal(null);
    expect(verifySessionCookie(key, `${newSessionId()}.${cookie.split('.')[1]}`)).to.equal(null);
    const tampered = cookie.slice(0, -2) + (cookie.endsWith('AA') ? 'BB' : 'AA');
    expect(verifySessionCookie(key, tampered)).to.equal(null);
    // Every other spelling of the last character (its low bits are padding) is refused too.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (const last of alphabet) {
      if (last !== cookie.at(-1))
        expect(verifySessionCookie(key, `${cookie.slice(0, -1)}${last}`), last).to.equal(null);
    }
    for (const junk of ['', id, `${id}.`, `.${id}`, `${cookie}x`, cookie.replace('.', '-'), 'a'.repeat(87)]) {
      expect(verifySessionCookie(key, junk), junk).to.equal(null);
    }
  });
});
