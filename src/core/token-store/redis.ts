// The token store for several instances: records in Redis, sealed by gatehouse
// before they leave the process (Redis never holds a plaintext token), each key
// with a TTL at the record's expiry.
//
// - Key names are an HMAC of the id (as the filesystem store's file names):
//   `<prefix>{<hmac>}:<kind>`. The braces keep a record and its lock in one
//   Redis Cluster slot, so a script can touch both.
// - Every write and removal is published on the link's change channel in the
//   same script, so no instance can miss one that took effect (StoreChanges).
// - Exclusive sections are a lock with a lease (`SET NX PX`, released by its
//   holder's token only, the lease renewed while the work runs) and fencing:
//   inside a section, a write or removal of that id takes effect only while
//   the lock is still this holder's, so a holder that outlived its lease (a
//   long pause) cannot overwrite what the next holder wrote.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHmac, randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';

import type { Logger } from '../../logging.js';
import { deriveKey } from '../crypto/keys.js';
import { changesOf } from './change-channel.js';
import { DELETE_IF_HELD, type RedisLink } from './redis-link.js';
import { openRecord, parseSealedRecord, sealRecord } from './sealed-record.js';
import { checkedExpiry, StoreUnavailableError, type StoreChanges, type TokenStore } from './token-store.js';
import { Turns } from './turns.js';

/** How long a lock holds without renewal: longer than a refresh's provider call (10 s) and write. */
export const LOCK_LEASE_MS = 15_000;
/** A held lock's lease is renewed this often while its work runs. */
const LOCK_RENEW_MS = 5_000;
/** How long a caller waits for a lock another holder keeps before giving up (503). */
const LOCK_WAIT_MS = 2 * LOCK_LEASE_MS;
const LOCK_POLL_MAX_MS = 100;

/** A write or removal inside a section whose lock is no longer the writer's: refused, nothing changed. */
export class LockLostError extends StoreUnavailableError {}

/** Sets the record (PXAT), then publishes the change. KEYS: record, lock; ARGV: value, expiry, channel, notice, fencing token or "". */
const WRITE = `
if ARGV[5] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[5] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1`;
/** Removes the record, then publishes the change. KEYS: record, lock; ARGV: channel, notice, fencing token or "". */
const REMOVE = `
if ARGV[3] ~= '' and redis.call('GET', KEYS[2]) ~= ARGV[3] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1`;
/** Renews the lease while the lock is this holder's. KEYS: lock; ARGV: token, lease. */
const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])`;
/** Removes an expired record unless a section holds its id. KEYS: record, lock; ARGV: the value the sweep read, channel, notice. */
const SWEEP_ONE = `
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1`;

export interface RedisTokenStoreOptions {
  readonly link: RedisLink;
  /** What the records are (`session`, `signout`…): one key space per kind under the link's prefix. */
  readonly kind: string;
  /** App scope: records of one app are invisible to another. */
  readonly app: string;
  readonly masterKey: Buffer;
  readonly logger?: Logger;
  readonly now?: () => number;
}

export class RedisTokenStore<T> implements TokenStore<T> {
  readonly #link: RedisLink;
  readonly #kind: string;
  readonly #dataKey: Buffer;
  readonly #namesKey: Buffer;
  readonly #logger: Logger | undefined;
  readonly #now: () => number;
  /** Sections of this process take turns here first: one lock request per id at a time reaches Redis. */
  readonly #turns = new Turns();
  /** The sections the current work runs in: lock key → this holder's token. */
  readonly #held = new AsyncLocalStorage<ReadonlyMap<string, string>>();
  readonly changes: StoreChanges;

  constructor(options: RedisTokenStoreOptions) {
    this.#link = options.link;
    this.#kind = options.kind;
    this.#dataKey = deriveKey(options.masterKey, 'token-store', options.app);
    this.#namesKey = deriveKey(options.masterKey, 'token-store-names', `${options.app}\0${options.kind}`);
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    this.changes = changesOf(this.#link, this.#kind, (id) => this.#name(id));
  }

  #name(id: string): string {
    return createHmac('sha256', this.#namesKey).update(id).digest('base64url');
  }

  #recordKey(name: string): string {
    return `${this.#link.prefix}{${name}}:${this.#kind}`;
  }

  #lockKey(name: string): string {
    return `${this.#link.prefix}{${name}}:${this.#kind}:lock`;
  }

  async get(id: string): Promise<T | undefined> {
    const name = this.#name(id);
    const key = this.#recordKey(name);
    const text = await this.#link.run((client) => client.get(key));
    if (text === null) return undefined;
    const sealed = parseSealedRecord(text);
    if (sealed === undefined) {
      this.#logger?.warn({ key, reason: 'unparseable' }, 'token store record ignored');
      return undefined;
    }
    if (sealed.expiresAt <= this.#now()) return undefined;
    const record = openRecord<T>(this.#dataKey, key, sealed);
    if (record === undefined) this.#logger?.warn({ key, reason: 'does not decrypt' }, 'token store record ignored');
    return record;
  }

  async put(id: string, record: T, expiresAt: number): Promise<void> {
    checkedExpiry(expiresAt);
    const name = this.#name(id);
    const key = this.#recordKey(name);
    const lock = this.#lockKey(name);
    // PXAT takes a whole, positive time; a record already expired is simply gone.
    if (expiresAt < 1) return this.delete(id);
    const value = JSON.stringify(sealRecord(this.#dataKey, key, record, expiresAt));
    const token = this.#held.getStore()?.get(lock) ?? '';
    const done = await this.#link.script(
      WRITE,
      [key, lock],
      [value, String(Math.ceil(expiresAt)), this.#link.channel, this.#link.notice(this.#kind, name), token],
    );
    if (done !== 1)
      throw new LockLostError(
        'the record was not written: this section outlived its lease and another holder has the lock',
      );
  }

  async delete(id: string): Promise<void> {
    const name = this.#name(id);
    const lock = this.#lockKey(name);
    const token = this.#held.getStore()?.get(lock) ?? '';
    const done = await this.#link.script(
      REMOVE,
      [this.#recordKey(name), lock],
      [this.#link.channel, this.#link.notice(this.#kind, name), token],
    );
    if (done !== 1)
      throw new LockLostError(
        'the record was not removed: this section outlived its lease and another holder has the lock',
      );
  }

  /**
   * Redis removes each record at its expiry by itself (its TTL), so gatehouse does not schedule
   * this for a Redis store. It removes what is expired by this instance's clock and not yet by
   * Redis' (clocks that disagree), skipping ids a section holds.
   */
  async sweep(): Promise<number> {
    const now = this.#now();
    let removed = 0;
    const pattern = `${this.#link.prefix}{*}:${this.#kind}`;
    for await (const keys of this.#link.scan(pattern)) {
      for (const key of keys) {
        const text = await this.#link.run((client) => client.get(key));
        if (text === null) continue;
        const sealed = parseSealedRecord(text);
        if (sealed !== undefined && sealed.expiresAt > now) continue;
        const name = key.slice(key.indexOf('{') + 1, key.lastIndexOf('}'));
        const gone = await this.#link.script(
          SWEEP_ONE,
          [key, this.#lockKey(name)],
          [text, this.#link.channel, this.#link.notice(this.#kind, name)],
        );
        if (gone === 1) removed++;
      }
    }
    return removed;
  }

  exclusive<R>(id: string, work: () => Promise<R>): Promise<R> {
    return this.#turns.run(id, async () => {
      const lock = this.#lockKey(this.#name(id));
      const token = await this.#acquire(lock);
      const renewal = setInterval(() => {
        this.#link.script(RENEW, [lock], [token, String(LOCK_LEASE_MS)]).then(
          (held) =>
            held === 0 &&
            this.#logger?.warn(
              { lock },
              "token store lock lost before its work ended (its lease ran out): the work's writes will be refused",
            ),
          () => undefined, // Redis unreachable: the work's own commands fail too
        );
      }, LOCK_RENEW_MS);
      renewal.unref();
      const sections = new Map(this.#held.getStore() ?? []);
      sections.set(lock, token);
      try {
        return await this.#held.run(sections, work);
      } finally {
        clearInterval(renewal);
        await this.#link.script(DELETE_IF_HELD, [lock], [token]).catch(() => undefined); // a lock left behind runs out with its lease
      }
    });
  }

  async #acquire(lock: string): Promise<string> {
    const token = randomBytes(12).toString('base64url');
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (let wait = 5; ; wait = Math.min(wait * 2, LOCK_POLL_MAX_MS)) {
      const taken = await this.#link.run((client) =>
        client.set(lock, token, { condition: 'NX', expiration: { type: 'PX', value: LOCK_LEASE_MS } }),
      );
      if (taken === 'OK') return token;
      if (Date.now() > deadline)
        throw new StoreUnavailableError(`a lock in the token store was held for over ${LOCK_WAIT_MS} ms`);
      await delay(wait);
    }
  }
}
