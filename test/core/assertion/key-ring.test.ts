// The assertion key ring: made at first use, kept sealed in the token store, rotated with each new
// key published before it signs and each old one published until its assertions have expired.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';

import {
  CLOCK_SKEW_MS,
  KEY_RING_ID,
  RING_REREAD_MS,
  StoredAssertionKeyRing,
  type StoredKeyRing,
} from '../../../src/core/assertion/key-ring.js';
import { FileSystemTokenStore } from '../../../src/core/token-store/filesystem.js';
import { MemoryTokenStore } from '../../../src/core/token-store/memory.js';

const LIFETIME = 5 * 60_000;
const PERIOD = 24 * 3_600_000;
const LEAD = 3_600_000;

function clock(start = Date.UTC(2026, 0, 1)) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms), set: (at: number) => (t = at) };
}

function ringOn(store: MemoryTokenStore<StoredKeyRing> | FileSystemTokenStore<StoredKeyRing>, now: () => number) {
  return new StoredAssertionKeyRing({ store, lifetimeMs: LIFETIME, now, signingPeriodMs: PERIOD, publishLeadMs: LEAD });
}

async function signedBy(ring: StoredAssertionKeyRing, now: number): Promise<string> {
  const key = await ring.signingKey();
  return new SignJWT({ sub: 'u' })
    .setProtectedHeader({ alg: key.alg, kid: key.kid })
    .setIssuedAt(Math.floor(now / 1000))
    .setExpirationTime(Math.floor((now + LIFETIME) / 1000))
    .sign(key.key);
}

describe('assertion key ring', () => {
  it('makes an ES256 key at first use, which signs at once and is published', async () => {
    const time = clock();
    const store = new MemoryTokenStore<StoredKeyRing>(time.now);
    const ring = ringOn(store, time.now);
    const key = await ring.signingKey();
    expect(key.alg).to.equal('ES256');
    const published = await ring.publishedKeys();
    expect(published).to.have.length(1);
    expect(published[0]).to.include({ kid: key.kid, alg: 'ES256', use: 'sig', kty: 'EC', crv: 'P-256' });
    expect(published[0]).not.to.have.property('d');
    const jwt = await signedBy(ring, time.now());
    await jwtVerify(jwt, createLocalJWKSet({ keys: [...published] }), { currentDate: new Date(time.now()) });
    const stored = await store.get(KEY_RING_ID);
    expect(stored?.keys).to.have.length(1);
  });

  it('is shared through the store: a second instance signs with the same key', async () => {
    const time = clock();
    const store = new MemoryTokenStore<StoredKeyRing>(time.now);
    const first = await ringOn(store, time.now).signingKey();
    const second = await ringOn(store, time.now).signingKey();
    expect(second.kid).to.equal(first.kid);
  });

  it('publishes a successor a lead before it signs, and the old key until its assertions have expired', async () => {
    const time = clock();
    const store = new MemoryTokenStore<StoredKeyRing>(time.now);
    const ring = ringOn(store, time.now);
    const start = time.now();
    const first = await ring.signingKey();
    time.set(start + PERIOD - 2 * LEAD - 1);
    expect((await ring.publishedKeys()).map((k) => k.kid)).to.deep.equal([first.kid]);
    time.set(start + PERIOD - 2 * LEAD + RING_REREAD_MS);
    const published = (await ring.publishedKeys()).map((k) => k.kid);
    expect(published).to.have.length(2);
    expect((await ring.signingKey()).kid).to.equal(first.kid, 'the successor does not sign yet');
    const next = published.find((kid) => kid !== first.kid)!;
    time.set(start + PERIOD - 1);
    expect((await ring.signingKey()).kid).to.equal(first.kid);
    time.set(start + PERIOD);
    expect((await ring.signingKey()).kid).to.equal(next);
    expect((await ring.publishedKeys()).map((k) => k.kid)).to.include(first.kid);
    // The old key loses its private half in the store once it signs no more.
    const stored = (await store.get(KEY_RING_ID))!;
    expect(stored.keys.find((k) => k.kid === first.kid)!.privateJwk).to.equal(undefined);
    time.set(start + PERIOD + LIFETIME + CLOCK_SKEW_MS - 1);
    expect((await ring.publishedKeys()).map((k) => k.kid)).to.include(first.kid);
    time.set(start + PERIOD + LIFETIME + CLOCK_SKEW_MS);
    expect((await ring.publishedKeys()).map((k) => k.kid)).to.deep.equal([next]);
  });

  it('over many rotations: every valid assertion verifies against what is published, and no key signs unpublished', async () => {
    const time = clock();
    const store = new MemoryTokenStore<StoredKeyRing>(time.now);
    // Two instances on one store, each holding the ring it read for a while.
    const rings = [ringOn(store, time.now), ringOn(store, time.now)];
    const firstSeen = new Map<string, number>();
    const issued: Array<{ jwt: string; exp: number }> = [];
    let firstKid: string | undefined;
    const end = time.now() + 4 * PERIOD;
    let step = 0;
    while (time.now() < end) {
      const ring = rings[step++ % 2]!;
      for (const key of await rings[(step + 1) % 2]!.publishedKeys())
        if (!firstSeen.has(key.kid!)) firstSeen.set(key.kid!, time.now());
      const jwt = await signedBy(ring, time.now());
      const kid = decodeProtectedHeader(jwt).kid!;
      firstKid ??= kid;
      if (kid !== firstKid)
        expect(time.now() - (firstSeen.get(kid) ?? Infinity)).to.be.at.least(
          LEAD - RING_REREAD_MS,
          'a key signed before the other instance published it for the lead time',
        );
      issued.push({ jwt, exp: time.now() + LIFETIME });
      const published = { keys: [...(await ring.publishedKeys())] };
      for (const assertion of issued.filter((a) => a.exp > time.now()))
        await jwtVerify(assertion.jwt, createLocalJWKSet(published), { currentDate: new Date(time.now()) });
      time.advance(7 * 60_000 + (step % 5) * 60_000);
    }
    expect(new Set(issued.map((a) => decodeProtectedHeader(a.jwt).kid)).size).to.be.at.least(4);
  });

  it('after every instance was away past its key, a new key signs at once', async () => {
    const time = clock();
    const store = new MemoryTokenStore<StoredKeyRing>(time.now);
    const first = await ringOn(store, time.now).signingKey();
    time.advance(PERIOD * 2);
    const later = ringOn(store, time.now);
    const key = await later.signingKey();
    expect(key.kid).not.to.equal(first.kid);
    expect((await later.publishedKeys()).map((k) => k.kid)).to.deep.equal([key.kid]);
  });

  it('is sealed in the filesystem store: no private key in the clear', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-assertion-keys-'));
    try {
      const masterKey = randomBytes(32);
      const store = new FileSystemTokenStore<StoredKeyRing>({ directory, app: 'default', masterKey });
      await store.prepare();
      const ring = new StoredAssertionKeyRing({ store, lifetimeMs: LIFETIME });
      const key = await ring.signingKey();
      const files: string[] = [];
      const walk = async (dir: string): Promise<void> => {
        for (const entry of await readdir(dir, { withFileTypes: true }))
          if (entry.isDirectory()) await walk(path.join(dir, entry.name));
          else files.push(path.join(dir, entry.name));
      };
      await walk(directory);
      expect(files).not.to.be.empty;
      const stored = (await store.get(KEY_RING_ID))!;
      const d = stored.keys[0]!.privateJwk!.d!;
      for (const file of files) {
        const text = await readFile(file, 'utf8');
        expect(text).not.to.include(d);
        expect(text).not.to.include(key.kid);
      }
      // Another instance with the same master key reads the same key.
      const again = new FileSystemTokenStore<StoredKeyRing>({ directory, app: 'default', masterKey });
      expect((await new StoredAssertionKeyRing({ store: again, lifetimeMs: LIFETIME }).signingKey()).kid).to.equal(
        key.kid,
      );
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
