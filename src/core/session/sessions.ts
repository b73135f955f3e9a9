// Server-side sessions: records in the token store, a bounded cache for the
// hot path, and single-flight refresh. The cookie naming one is cookie.ts's.
import { LRUCache } from 'lru-cache';

import type { Logger } from '../../logging.js';
import { NO_METRICS, type AuthMetrics } from '../auth-metrics.js';
import type { AuthConfig } from '../config/auth-config.js';
import { newSessionId } from '../crypto/session-id.js';
import type { LogoutNotice } from '../oidc/logout-token.js';
import type { Provider, RefreshedTokens } from '../providers/provider.js';
import { MemoryTokenStore } from '../token-store/memory.js';
import type { TokenStore } from '../token-store/token-store.js';
import { turnsOf, type InTurn } from '../token-store/turns.js';
import type { SessionActivity } from './activity.js';
import { assessSession, type Assessment } from './lifecycle.js';
import { endedBy, ProviderSignOuts, signOutRetentionMs, type ProviderSignOut } from './provider-sign-outs.js';
import { redeemAtProvider, refreshedSince } from './provider-refresh.js';
import type { SessionRecord } from './record.js';

interface CacheEntry {
  readonly record: SessionRecord;
  readonly until: number;
  readonly name?: string;
}

/**
 * How long a record read from the store is trusted without reading it again.
 * Within one process, logout, refresh and a provider's back-channel logout
 * update the cache at once; another instance sharing the store sees them
 * within this time.
 */
export const SESSION_CACHE_TTL_MS = 30_000;
export const SESSION_CACHE_MAX = 10_000;

export type RefreshOutcome =
  | { readonly ok: true; readonly record: SessionRecord }
  /** `gone`: the session's provider is no longer configured; `ended`: its record left the store (signed out elsewhere). */
  | { readonly ok: false; readonly reason: 'no-refresh-token' | 'refused' | 'unavailable' | 'gone' | 'ended' };

export class Sessions {
  /**
   * `name`: the store's name for the id, when the store tells of other instances' changes by name.
   * Bounded (lru-cache, least recently used first); an entry leaving takes its name along.
   */
  readonly #cache = new LRUCache<string, CacheEntry>({
    max: SESSION_CACHE_MAX,
    dispose: (entry, id) => {
      if (entry.name !== undefined && this.#cachedNames.get(entry.name) === id) this.#cachedNames.delete(entry.name);
    },
  });
  /** Cached ids by the store's name for them (a store with StoreChanges only). */
  readonly #cachedNames = new Map<string, string>();
  readonly #refreshing = new Map<string, Promise<RefreshOutcome>>();
  /** Store reads in flight, shared by every request for the same session while it is read. */
  readonly #reading = new Map<string, Promise<SessionRecord | undefined>>();
  readonly #fingerprints: ReadonlyMap<string, string>;
  readonly #signOuts: ProviderSignOuts;
  readonly #signOutStore: TokenStore<ProviderSignOut>;
  /** Moves when a provider reports a sign-out here: a store read that overlapped one is not cached. */
  #signOutsReported = 0;
  /**
   * Refreshed records the store failed to take (a full disk, a read-only mount): the provider has
   * already rotated the refresh token they hold, so they are served from here, in place of the
   * stored record, and written again on the next read until the store takes them.
   */
  readonly #unsaved = new LRUCache<string, SessionRecord>({ max: SESSION_CACHE_MAX });
  /** A session's logout, refresh and unsaved-refresh write take turns (through the store, across instances, when it can). */
  readonly #inTurn: InTurn;

  constructor(
    private readonly config: AuthConfig,
    private readonly store: TokenStore<SessionRecord>,
    private readonly providers: ReadonlyMap<string, Provider>,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
    private readonly cacheTtlMs: number = SESSION_CACHE_TTL_MS,
    /** Where providers' back-channel sign-outs are kept; shared by the instances that share `store`. */
    signOutStore: TokenStore<ProviderSignOut> = new MemoryTokenStore(now),
    private readonly metrics: AuthMetrics = NO_METRICS,
    /** The provider sessions sign-ins here were made in, for front-channel logout; shared likewise. */
    knownSessionStore: TokenStore<ProviderSignOut> = new MemoryTokenStore(now),
    /** With an idle timeout: when each session was last used (activity.ts). */
    private readonly activity?: SessionActivity,
  ) {
    this.#signOutStore = signOutStore;
    this.#fingerprints = new Map([...providers].map(([alias, provider]) => [alias, provider.fingerprint]));
    this.#inTurn = turnsOf(store);
    this.#signOuts = new ProviderSignOuts(signOutStore, signOutRetentionMs(config, cacheTtlMs), now, knownSessionStore);
    // Another instance logged a session out or refreshed it: read it again from the next request on.
    store.changes?.onChange((name) => (name === undefined ? this.#forgetAll() : this.#forgetNamed(name)));
    // A provider's sign-out kept by another instance may end any cached session.
    signOutStore.changes?.onChange(() => {
      this.#signOutsReported++;
      this.#forgetAll();
    });
  }

  /** Whether what is read from the store may be cached now: not while another instance's changes could go unheard. */
  get #mayCache(): boolean {
    return (
      this.cacheTtlMs > 0 && this.store.changes?.watching !== false && this.#signOutStore.changes?.watching !== false
    );
  }

  #forgetNamed(name: string): void {
    const id = this.#cachedNames.get(name);
    if (id !== undefined) this.#forget(id);
  }

  #forgetAll(): void {
    this.#cache.clear();
    this.#cachedNames.clear();
    this.#reading.clear();
  }

  /**
   * The session's record: from the cache, else one store read shared by every
   * concurrent caller (when a cached record expires under load, the file is
   * read and decrypted once, not once per request).
   */
  async load(id: string): Promise<SessionRecord | undefined> {
    const cached = this.#cache.get(id);
    const record =
      cached !== undefined && cached.until > this.now()
        ? cached.record
        : await (this.#reading.get(id) ?? this.#read(id));
    // Each load is a use of the session (or finds it idle, which assess then says).
    if (record !== undefined) await this.activity?.use(id, record);
    return record;
  }

  #read(id: string): Promise<SessionRecord | undefined> {
    const signOutsBefore = this.#signOutsReported;
    const read: Promise<SessionRecord | undefined> = this.#storedAndSaved(id).then(
      (record) => {
        // Cached only if nothing wrote or removed the session meanwhile: a logout must not be
        // undone by a read that started before it (that read's callers still get what it read).
        // Nor if a provider reported a sign-out meanwhile, which the read may have missed.
        if (this.#reading.get(id) === read) {
          if (record !== undefined && this.#signOutsReported === signOutsBefore) this.#remember(id, record);
          else this.#forget(id);
        }
        return record;
      },
      (error: unknown) => {
        if (this.#reading.get(id) === read) this.#reading.delete(id);
        throw error;
      },
    );
    this.#reading.set(id, read);
    return read;
  }

  /**
   * The record as stored (or as refreshed, when the store failed to take it), unless its provider
   * has since reported that it signed the user out (the record is then removed).
   */
  async #stored(id: string): Promise<SessionRecord | undefined> {
    const stored = await this.store.get(id);
    if (stored === undefined) {
      // Gone from the store: signed out there, perhaps by another instance (or run out). An unsaved
      // refresh must not bring it back. (One that extended the session past the stored record's end
      // ends with it: fail closed.)
      this.#unsaved.delete(id);
      return undefined;
    }
    const record = this.#unsavedRecord(id) ?? stored;
    if (!(await this.#signOuts.ended(record))) return record;
    this.logger.info({ provider: record.provider }, 'session ended: signed out at the provider');
    this.#unsaved.delete(id);
    await this.store.delete(id);
    return undefined;
  }

  /** What `#stored` gives, and an unsaved refresh written to the store again (in the session's turn: a logout goes before or after it, never between). */
  async #storedAndSaved(id: string): Promise<SessionRecord | undefined> {
    const record = await this.#stored(id);
    if (record === undefined || this.#unsaved.get(id) !== record) return record;
    const write = async () => {
      if (this.#unsaved.get(id) !== record) return; // signed out, or refreshed again, meanwhile
      // Signed out meanwhile by another instance sharing the store: its logout took its turn before this one.
      if ((await this.store.get(id)) === undefined) {
        if (this.#unsaved.get(id) === record) this.#unsaved.delete(id);
        return;
      }
      await this.store.put(id, record, this.#keepUntil(record));
      if (this.#unsaved.get(id) === record) this.#unsaved.delete(id);
      this.logger.info({ provider: record.provider }, 'refreshed session stored');
    };
    // Still failing: served from memory as before, tried again on the next read.
    await this.#inTurn(id, write).catch(() => undefined);
    return record;
  }

  #unsavedRecord(id: string): SessionRecord | undefined {
    const record = this.#unsaved.get(id);
    if (record !== undefined && this.#keepUntil(record) <= this.now()) {
      this.#unsaved.delete(id);
      return undefined;
    }
    return record;
  }

  #keepUnsaved(id: string, record: SessionRecord): void {
    this.#unsaved.set(id, record);
  }

  /**
   * A provider's logout: kept for every instance sharing the store (each finds the sessions it
   * ends when it next reads them), and the sessions it ends that this instance has cached are
   * removed now. Returns how many of those there were. `unproven` (a front-channel logout, which
   * carries no signature): kept only for a provider session a sign-in here was made in.
   */
  async signedOutAtProvider(
    provider: string,
    notice: LogoutNotice,
    proof: 'signed' | 'unproven' = 'signed',
  ): Promise<number> {
    // Before and after: a read that started before the sign-out was stored may have missed it.
    this.#signOutsReported++;
    // Unproven: only a provider session a sign-in here was made in; nothing else is written for such a request.
    const kept =
      proof === 'signed'
        ? (await this.#signOuts.record(provider, notice), true)
        : notice.sid !== undefined && (await this.#signOuts.recordKnown(provider, { ...notice, sid: notice.sid }));
    this.#signOutsReported++;
    if (!kept) return 0;
    // Reads under way may have missed it: a request from now on reads again rather than share their answer.
    this.#reading.clear();
    const ended = [...this.#cache].filter(([, entry]) => endedBy(entry.record, provider, notice)).map(([id]) => id);
    await Promise.all(ended.map((id) => this.destroy(id)));
    return ended.length;
  }

  #remember(id: string, record: SessionRecord): void {
    this.#reading.delete(id); // a read in flight is older than this record
    this.#uncache(id);
    if (!this.#mayCache) return;
    const name = this.store.changes?.nameOf(id);
    this.#cache.set(id, { record, until: this.now() + this.cacheTtlMs, ...(name !== undefined ? { name } : {}) });
    if (name !== undefined) this.#cachedNames.set(name, id);
  }

  #uncache(id: string): void {
    this.#cache.delete(id); // its name goes with it (dispose)
  }

  assess(record: SessionRecord | undefined, host: string): Assessment {
    return assessSession(record, {
      now: this.now(),
      app: this.config.app,
      configFingerprints: this.#fingerprints,
      host,
      refreshWindowMs: this.config.refreshWindowMs,
      idle: record !== undefined && this.activity?.isIdle(record) === true,
    });
  }

  /** Stores a new session under a fresh id (never a reused one: no fixation). */
  async create(record: SessionRecord): Promise<string> {
    const id = newSessionId();
    // Before the session: a front-channel logout naming its provider session must find the note.
    await this.#signOuts.noteSession(record);
    await this.store.put(id, record, this.#keepUntil(record));
    this.#remember(id, record);
    return id;
  }

  /** Records outlive their session by the refresh extension, so /.auth/refresh can still renew them. */
  #keepUntil(record: SessionRecord): number {
    return record.expiresAt + this.config.tokenStore.refreshExtensionMs;
  }

  async destroy(id: string): Promise<void> {
    // Before and after the delete: a read in flight, or one that ran while the file was still
    // there, must not bring the record back into the cache (a replayed cookie would pass).
    this.#forget(id);
    this.activity?.forget(id);
    const end = async () => {
      // In the session's turn: an unsaved refresh is neither served nor written again from here on.
      this.#unsaved.delete(id);
      await this.store.delete(id);
      this.#forget(id);
    };
    // A refresh at the provider writes the session back when its answer comes: the delete takes
    // its turn after it (in this process, and through the store's turns in every instance
    // sharing it), and a refresh that starts after it finds no session to renew.
    await this.#refreshing.get(id)?.catch(() => undefined);
    await this.#inTurn(id, end);
  }

  #forget(id: string): void {
    this.#uncache(id);
    this.#reading.delete(id);
  }

  /** One provider refresh per session at a time; concurrent callers share it. */
  refresh(id: string, record: SessionRecord, extendedUntil?: number): Promise<RefreshOutcome> {
    const running = this.#refreshing.get(id);
    if (running !== undefined) return running;
    const attempt = this.#refresh(id, record, extendedUntil).finally(() => this.#refreshing.delete(id));
    this.#refreshing.set(id, attempt);
    return attempt;
  }

  /**
   * `extendedUntil`: a session renewed within its refresh extension gets this new end.
   *
   * Instances sharing the store refresh a session one at a time, each starting from the record
   * as stored, not as it cached it: another instance may have refreshed the session since this
   * one read it. Redeeming the refresh token it replaced would be refused by a provider that
   * rotates refresh tokens, and many (oidc-provider, Auth0, Okta without a grace period) then
   * revoke the whole grant; so a record refreshed elsewhere is taken as this refresh's outcome.
   */
  async #refresh(id: string, cached: SessionRecord, extendedUntil: number | undefined): Promise<RefreshOutcome> {
    const refreshToken = cached.tokens.refreshToken;
    if (refreshToken === undefined) return { ok: false, reason: 'no-refresh-token' };
    const provider = this.providers.get(cached.provider);
    if (provider === undefined) return { ok: false, reason: 'gone' };
    if (provider.refresh === undefined) return { ok: false, reason: 'no-refresh-token' };
    const redeem = provider.refresh.bind(provider);
    const renew = async (): Promise<RefreshOutcome> => {
      const signOutsBefore = this.#signOutsReported;
      const record = await this.#stored(id);
      if (record === undefined) {
        this.#forget(id);
        return { ok: false, reason: 'ended' };
      }
      // The renewed record is cached only if no provider reported a sign-out meanwhile, which the read may have missed.
      const keep = (renewed: SessionRecord) =>
        this.#signOutsReported === signOutsBefore ? this.#remember(id, renewed) : this.#forget(id);
      if (refreshedSince(cached, record)) {
        this.logger.debug({ provider: record.provider }, 'session refreshed by another instance; its tokens taken');
        keep(record);
        return { ok: true, record };
      }
      // Not refreshed since: the stored refresh token is the cached one.
      return this.#redeem(id, record, () => redeem(refreshToken, record.tokens), extendedUntil, keep);
    };
    return this.#inTurn(id, renew);
  }

  async #redeem(
    id: string,
    record: SessionRecord,
    redeem: () => Promise<RefreshedTokens>,
    extendedUntil: number | undefined,
    keep: (renewed: SessionRecord) => void,
  ): Promise<RefreshOutcome> {
    const answer = await redeemAtProvider(record, redeem, extendedUntil, this.logger, this.metrics);
    if (!answer.ok) return answer;
    const refreshed = answer.record;
    try {
      await this.store.put(id, refreshed, this.#keepUntil(refreshed));
      this.#unsaved.delete(id);
    } catch (error) {
      // The provider has rotated the refresh token: dropping the answer would end the session at the next refresh.
      this.logger.error(
        { provider: record.provider, reason: (error as Error).message },
        'refreshed session not stored: served from memory, stored again on its next read',
      );
      this.#keepUnsaved(id, refreshed);
    }
    keep(refreshed);
    this.metrics.refresh(record.provider, 'success');
    return { ok: true, record: refreshed };
  }
}
