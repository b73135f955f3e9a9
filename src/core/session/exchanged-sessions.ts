// Sessions made by token exchange, remembered by what was exchanged. Every
// exchange is still checked in full (signature, expiry, the provider's own
// answer); what is saved is the session: the same provider token exchanged
// again, by an app that exchanges on every start or by a caller replaying one
// valid token in a loop, is answered with the session it made before instead of
// writing one more record to the store each time (a stolen or shared token could
// otherwise fill the store's disk, a record per request, for as long as it is valid).
//
// Keyed by a SHA-256 digest (the keys never hold a credential), bounded; the
// oldest entries go first. Given a shared store (Redis), every instance finds
// the sessions the others made, until they expire; without one, each instance
// remembers its own exchanges, and instances make at most one session each for
// a token.
import { hash } from 'node:crypto';

import { LRUCache } from 'lru-cache';

import type { TokenExchange } from '../providers/provider.js';
import type { TokenStore } from '../token-store/token-store.js';

/** Where instances share what their exchanges made: the session id, kept until the session's end. */
export interface SharedExchanges<Session> {
  readonly store: TokenStore<{ readonly id: string }>;
  readonly expiresAt: (session: Session) => number;
}

export const EXCHANGED_SESSIONS_MAX = 10_000;

/** What an exchange is remembered by: its SHA-256 digest, one byte per character. */
export type ExchangeKey = string & { readonly __exchangeKey: unique symbol };

export class ExchangedSessions<Session> {
  /** Session ids by exchange, the least recently used forgotten first past `max`. */
  readonly #ids: LRUCache<ExchangeKey, string>;
  /** Sessions being made, so that concurrent exchanges of one token make one. */
  readonly #making = new Map<ExchangeKey, Promise<{ id: string; session: Session }>>();

  constructor(
    max = EXCHANGED_SESSIONS_MAX,
    private readonly shared?: SharedExchanges<Session>,
  ) {
    this.#ids = new LRUCache<ExchangeKey, string>({ max });
  }

  /**
   * Everything the provider was given (a Twitter secret or a PKCE verifier makes another exchange),
   * for which provider and host: a session is bound to the host it was made on.
   */
  static key(provider: string, host: string, exchange: TokenExchange): ExchangeKey {
    const fields = [
      exchange.accessToken,
      exchange.accessTokenSecret,
      exchange.idToken,
      exchange.authorizationCode,
      exchange.redirectUri,
      exchange.codeVerifier,
    ];
    return hash('sha256', JSON.stringify([provider, host.toLowerCase(), fields]), 'binary') as ExchangeKey;
  }

  /**
   * The session this exchange made before, when `stillUsable` finds it still is one; else a new one
   * from `make`. Concurrent callers with one key share the session one of them makes.
   */
  async session(
    key: ExchangeKey,
    stillUsable: (id: string) => Promise<Session | undefined>,
    make: () => Promise<{ id: string; session: Session }>,
  ): Promise<{ id: string; session: Session }> {
    const making = this.#making.get(key);
    if (making !== undefined) return making;
    const storeId = Buffer.from(key, 'binary').toString('hex');
    let known = this.#ids.get(key);
    if (known === undefined && this.shared !== undefined) {
      known = (await this.shared.store.get(storeId))?.id;
      // Another caller here may have started making one while this one looked.
      const started = this.#making.get(key);
      if (started !== undefined) return started;
    }
    if (known !== undefined) {
      const session = await stillUsable(known);
      if (session !== undefined) return { id: known, session };
      if (this.#ids.get(key) === known) this.#ids.delete(key);
      if (this.shared !== undefined) await this.shared.store.delete(storeId);
      // Another caller may have started making one while this one looked.
      const started = this.#making.get(key);
      if (started !== undefined) return started;
    }
    const made = make().then(async (result) => {
      await this.shared?.store.put(storeId, { id: result.id }, this.shared.expiresAt(result.session));
      return result;
    });
    const settled = made.finally(() => this.#making.delete(key));
    this.#making.set(key, settled);
    const { id } = await settled;
    this.#ids.set(key, id);
    return settled;
  }

  get size(): number {
    return this.#ids.size;
  }
}
