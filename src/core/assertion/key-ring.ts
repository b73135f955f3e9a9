// The keys identity assertions are signed with, made by gatehouse and kept in the token store
// (sealed like every record; in Redis, shared by every instance). Rotation, as apps caching the
// published keys need it (docs/headers.md#keys-and-rotation):
//
// - a key signs for SIGNING_PERIOD_MS; its successor is made when less than twice PUBLISH_LEAD_MS
//   of that is left, and published at least PUBLISH_LEAD_MS before it signs, longer than an app may cache the key set (JWKS_MAX_AGE_SECONDS) plus the time an
//   instance keeps the ring it read (RING_REREAD_MS), so no app meets an unknown key;
// - a key that signs no more loses its private half and stays published until the last assertion
//   it signed has expired (its end of signing + the assertion lifetime + clock skew);
// - the first key, or one made after every instance was down past its key's end, signs at once:
//   there is no key set an app could have cached.
//
// Every instance reads the ring again after RING_REREAD_MS, and at once when what it holds has no
// key to sign with or needs a successor; changes are made inside the store's exclusive section for
// the ring, read afresh there, so two instances never make two successors.
import type { JWK } from 'jose';

import type { TokenStore } from '../token-store/token-store.js';
import { LONGEST_ASSERTION_LIFETIME_MS } from './settings.js';
import { newStoredKey, publishedJwk, signingKeyOf, type SigningKey, type StoredAssertionKey } from './signing-key.js';

/** How long one key signs. */
export const SIGNING_PERIOD_MS = 7 * 24 * 3_600_000;
/** How long a new key is published before it signs. */
export const PUBLISH_LEAD_MS = 3_600_000;
/** How long an app may cache the published keys (Cache-Control max-age of the key set): well under PUBLISH_LEAD_MS. */
export const JWKS_MAX_AGE_SECONDS = 15 * 60;
/** How long an instance keeps the ring it read before reading it again. */
export const RING_REREAD_MS = 60_000;
/** Clocks of gatehouse and of the app may disagree by this much. */
export const CLOCK_SKEW_MS = 60_000;

/** The ring's one record in the token store. */
export const KEY_RING_ID = 'identity-assertion-keys';

/** The ring as stored. */
export interface StoredKeyRing {
  readonly format: 1;
  readonly keys: readonly StoredAssertionKey[];
}

/** What the signer and the keys endpoint need of a ring, whoever holds its keys. */
export interface AssertionKeyRing {
  /** The key that signs now. */
  signingKey(): Promise<SigningKey>;
  /** The keys an app must accept now: the one that signs, those still valid for what they signed, the next. */
  publishedKeys(): Promise<readonly JWK[]>;
}

export interface StoredKeyRingOptions {
  readonly store: TokenStore<StoredKeyRing>;
  /** The assertion lifetime: how long a retired key stays published. */
  readonly lifetimeMs: number;
  readonly now?: () => number;
  /** Tests shorten the schedule; deployments keep the defaults above. */
  readonly signingPeriodMs?: number;
  readonly publishLeadMs?: number;
}

export class StoredAssertionKeyRing implements AssertionKeyRing {
  readonly #store: TokenStore<StoredKeyRing>;
  readonly #lifetimeMs: number;
  readonly #now: () => number;
  readonly #signingPeriodMs: number;
  readonly #publishLeadMs: number;
  #held: { readonly ring: StoredKeyRing; readonly readAt: number } | undefined;
  #reading: Promise<StoredKeyRing> | undefined;
  #published: { readonly kids: readonly string[]; readonly jwks: readonly JWK[] } | undefined;
  /** Imported private keys, by kid: importing is asynchronous work a cached signer need not repeat. */
  readonly #imported = new Map<string, Promise<SigningKey>>();

  constructor(options: StoredKeyRingOptions) {
    this.#store = options.store;
    this.#lifetimeMs = options.lifetimeMs;
    this.#now = options.now ?? Date.now;
    this.#signingPeriodMs = options.signingPeriodMs ?? SIGNING_PERIOD_MS;
    this.#publishLeadMs = options.publishLeadMs ?? PUBLISH_LEAD_MS;
  }

  async signingKey(): Promise<SigningKey> {
    const now = this.#now();
    const stored = signerAt(await this.#ring(now), now);
    // #ring never hands out a ring without a signer at `now`.
    if (stored === undefined) throw new Error('the assertion key ring has no key to sign with');
    let imported = this.#imported.get(stored.kid);
    if (imported === undefined) {
      imported = signingKeyOf(stored);
      this.#imported.set(stored.kid, imported);
      imported.catch(() => this.#imported.delete(stored.kid));
    }
    return imported;
  }

  async publishedKeys(): Promise<readonly JWK[]> {
    const now = this.#now();
    const ring = await this.#ring(now);
    const keys = ring.keys.filter((key) => now < key.signUntil + this.#lifetimeMs + CLOCK_SKEW_MS);
    // The same array while the same keys are published: the keys endpoint reuses its answer for it.
    const last = this.#published;
    if (last !== undefined && last.kids.length === keys.length && keys.every((key, i) => key.kid === last.kids[i]))
      return last.jwks;
    this.#published = { kids: keys.map((key) => key.kid), jwks: Object.freeze(keys.map(publishedJwk)) };
    return this.#published.jwks;
  }

  /** The ring as this instance holds it, read again when stale or when it needs a change. */
  async #ring(now: number): Promise<StoredKeyRing> {
    const held = this.#held;
    if (held !== undefined && now - held.readAt < RING_REREAD_MS && !this.#needsChange(held.ring, now))
      return held.ring;
    // One read at a time: the requests waiting meanwhile share it.
    this.#reading ??= this.#read(now).finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  async #read(now: number): Promise<StoredKeyRing> {
    let ring = (await this.#store.get(KEY_RING_ID)) ?? EMPTY_RING;
    if (this.#needsChange(ring, now)) {
      const change = async () => {
        // Read afresh inside the section: another instance may have made the change already.
        const current = (await this.#store.get(KEY_RING_ID)) ?? EMPTY_RING;
        if (!this.#needsChange(current, now)) return current;
        const changed = await this.#changed(current, now);
        await this.#store.put(KEY_RING_ID, changed, storedUntil(changed));
        return changed;
      };
      ring = this.#store.exclusive ? await this.#store.exclusive(KEY_RING_ID, change) : await change();
    }
    // Private keys of keys that sign no more are not kept in memory either.
    for (const kid of this.#imported.keys())
      if (!ring.keys.some((key) => key.kid === kid && key.privateJwk !== undefined)) this.#imported.delete(kid);
    this.#held = { ring, readAt: now };
    return ring;
  }

  /** Whether the ring lacks a key that signs now, lacks a published successor, or holds what it should drop. */
  #needsChange(ring: StoredKeyRing, now: number): boolean {
    if (signerAt(ring, now) === undefined) return true;
    if (lastSigner(ring)!.signUntil - now < 2 * this.#publishLeadMs) return true;
    return ring.keys.some(
      (key) =>
        key.signUntil + LONGEST_ASSERTION_LIFETIME_MS + CLOCK_SKEW_MS <= now ||
        (key.signUntil <= now && key.privateJwk !== undefined),
    );
  }

  /** The ring with its keys dropped, retired or added as `now` requires. */
  async #changed(ring: StoredKeyRing, now: number): Promise<StoredKeyRing> {
    let keys: StoredAssertionKey[] = ring.keys
      // A key is dropped once no assertion of the longest lifetime it could have signed is valid.
      .filter((key) => now < key.signUntil + LONGEST_ASSERTION_LIFETIME_MS + CLOCK_SKEW_MS)
      .map((key) => (key.signUntil <= now && key.privateJwk !== undefined ? withoutPrivatePart(key) : key));
    const last = lastSigner({ format: 1, keys });
    if (last === undefined || last.signUntil <= now) {
      keys = [...keys, await newStoredKey(now, now + this.#signingPeriodMs)];
    } else if (last.signUntil - now < 2 * this.#publishLeadMs) {
      // Published at least the lead before it signs; the current key signs on until then.
      const signFrom = Math.max(last.signUntil, now + this.#publishLeadMs);
      keys = keys.map((key) => (key === last ? { ...key, signUntil: signFrom } : key));
      keys.push(await newStoredKey(signFrom, signFrom + this.#signingPeriodMs));
    }
    return { format: 1, keys };
  }
}

const EMPTY_RING: StoredKeyRing = Object.freeze({ format: 1, keys: Object.freeze([]) });

/** The key that signs at `now`: held privately, within its signing period (the latest to start, should two be). */
function signerAt(ring: StoredKeyRing, now: number): StoredAssertionKey | undefined {
  let signer: StoredAssertionKey | undefined;
  for (const key of ring.keys)
    if (
      key.privateJwk !== undefined &&
      key.signFrom <= now &&
      now < key.signUntil &&
      !(signer && signer.signFrom > key.signFrom)
    )
      signer = key;
  return signer;
}

/** The key whose signing period ends last (the one a successor follows). */
function lastSigner(ring: StoredKeyRing): StoredAssertionKey | undefined {
  let last: StoredAssertionKey | undefined;
  for (const key of ring.keys)
    if (key.privateJwk !== undefined && (last === undefined || key.signUntil > last.signUntil)) last = key;
  return last;
}

function withoutPrivatePart(key: StoredAssertionKey): StoredAssertionKey {
  const { privateJwk: _dropped, ...rest } = key;
  return rest;
}

/** The record lasts as long as its last key must be published. */
function storedUntil(ring: StoredKeyRing): number {
  return Math.max(...ring.keys.map((key) => key.signUntil)) + LONGEST_ASSERTION_LIFETIME_MS + CLOCK_SKEW_MS;
}
