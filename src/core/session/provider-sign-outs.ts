// Sign-outs that providers reported through their back-channel logout. The
// session store is keyed by session id alone, so the sessions a sign-out ends
// are not looked up when it arrives: it is kept in a store of its own (shared
// by every instance, as the sessions are), and a session read from the store
// is checked against it. Each sign-out is kept for as long as a session made
// before it can still be in the store.
import type { AuthConfig } from '../config/auth-config.js';
import type { LogoutNotice } from '../oidc/logout-token.js';
import type { TokenStore } from '../token-store/token-store.js';
import { turnsOf, type InTurn } from '../token-store/turns.js';
import { CLOCK_TOLERANCE_SECONDS } from '../tokens/jwt-validator.js';
import { longestSessionMs } from './lifetime.js';
import type { SessionRecord } from './record.js';

/** One reported sign-out: the logout token's `iat` (ms, on the provider's clock). */
export interface ProviderSignOut {
  readonly at: number;
}

/**
 * How long a sign-out must be kept: any session made before it may be renewed up to then
 * (its lifetime, then the refresh extension), and a renewal by an instance that still had it
 * cached (for up to `sessionCacheTtlMs`) is not checked against sign-outs.
 */
export function signOutRetentionMs(config: AuthConfig, sessionCacheTtlMs: number): number {
  return (
    longestSessionMs(config.cookieExpiration) + config.tokenStore.refreshExtensionMs + Math.max(0, sessionCacheTtlMs)
  );
}

function sessionKey(provider: string, sid: string): string {
  return JSON.stringify(['signed-out-session', provider, sid]);
}

/** A provider session some sign-in here was made in (what a front-channel logout may name). */
function knownSessionKey(provider: string, sid: string): string {
  return JSON.stringify(['known-session', provider, sid]);
}

function userKey(provider: string, sub: string): string {
  return JSON.stringify(['signed-out-user', provider, sub]);
}

/**
 * Whether the session was made before `at`. The ID token's `iat` is on the provider's clock, as
 * a logout token's is; a session without one is judged by this instance's clock, with the
 * clock skew tokens are allowed (a sign-in just after the sign-out may then have to be repeated).
 */
function signedInBefore(record: SessionRecord, at: number): boolean {
  const issuedAt = record.providerSession?.issuedAt;
  return issuedAt !== undefined ? issuedAt <= at : record.createdAt <= at + CLOCK_TOLERANCE_SECONDS * 1000;
}

/** Whether `notice`, from `provider`, ends the session `record` is of. */
export function endedBy(record: SessionRecord, provider: string, notice: LogoutNotice): boolean {
  const session = record.providerSession;
  if (record.provider !== provider || session === undefined) return false;
  if (notice.sid !== undefined) return session.sid === notice.sid;
  return session.sub === notice.sub && signedInBefore(record, notice.issuedAt);
}

export class ProviderSignOuts {
  /** Two notices for one key are kept one after the other: the later one never lost to the earlier. */
  readonly #inTurn: InTurn;

  constructor(
    private readonly store: TokenStore<ProviderSignOut>,
    private readonly retentionMs: number,
    private readonly now: () => number,
    /**
     * The provider sessions sign-ins here were made in (noteSession). A store of their own: a note
     * is written at every sign-in, and a write to `store` makes every instance drop its cache.
     */
    private readonly knownSessions: TokenStore<ProviderSignOut>,
  ) {
    this.#inTurn = turnsOf(store);
  }

  /**
   * Keeps the notice: with a `sid`, that provider session's sign-ins ended; without, every
   * sign-in of the user made before it. A notice replayed, or older than one kept, changes
   * nothing: a user's sign-out never moves later, so it cannot end sign-ins made after it.
   */
  async record(provider: string, notice: LogoutNotice): Promise<void> {
    const id = notice.sid !== undefined ? sessionKey(provider, notice.sid) : userKey(provider, notice.sub!);
    const keep = async () => {
      const known = await this.store.get(id);
      if (known !== undefined && known.at >= notice.issuedAt) return;
      await this.store.put(id, { at: notice.issuedAt }, this.now() + this.retentionMs);
    };
    await this.#inTurn(id, keep);
  }

  /**
   * Notes that a sign-in here was made in the provider session `record` names (its `sid`), for as
   * long as a sign-out of it would be kept: a front-channel logout, which carries no proof, may
   * then end it, and one naming any other sid writes nothing (recordKnown).
   */
  async noteSession(record: SessionRecord): Promise<void> {
    const sid = record.providerSession?.sid;
    if (sid === undefined) return;
    await this.knownSessions.put(
      knownSessionKey(record.provider, sid),
      { at: this.now() },
      this.now() + this.retentionMs,
    );
  }

  /**
   * record(), for a sign-out of a provider session (a `sid`) only when a sign-in here was made in
   * it: an unproven request (front-channel logout) must not be able to fill the store with
   * sign-outs of sessions that never were. Returns whether it was kept.
   */
  async recordKnown(provider: string, notice: LogoutNotice & { readonly sid: string }): Promise<boolean> {
    if ((await this.knownSessions.get(knownSessionKey(provider, notice.sid))) === undefined) return false;
    await this.record(provider, notice);
    return true;
  }

  /** Whether a sign-out the provider reported ended this session. */
  async ended(record: SessionRecord): Promise<boolean> {
    const session = record.providerSession;
    if (session === undefined) return false;
    const [ofSession, ofUser] = await Promise.all([
      session.sid !== undefined ? this.store.get(sessionKey(record.provider, session.sid)) : undefined,
      this.store.get(userKey(record.provider, session.sub)),
    ]);
    return ofSession !== undefined || (ofUser !== undefined && signedInBefore(record, ofUser.at));
  }
}
