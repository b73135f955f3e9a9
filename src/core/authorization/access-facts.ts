// What gatehouse knows about a caller that authorization rules look at: taken
// from the provider at sign-in and at refresh (never per request) and kept in
// the session record, or read from a bearer token's claims.

/** The part of a caller's facts a session record keeps (docs/configuration.md, "Who may get in"). */
export interface AccessFacts {
  /** The e-mail address, only when the provider vouches for it (`email_verified`, GitHub's verified primary). */
  readonly verifiedEmail?: string;
  /** Group names or ids: the provider's groups claim, GitHub's organisations and teams. */
  readonly groups: readonly string[];
  /** Role names: the provider's roles claim (app roles for applications' tokens). */
  readonly roles: readonly string[];
  /**
   * Why the groups are not all known (the directory's group overage): a rule that asks for a group
   * then refuses rather than decide on part of them.
   */
  readonly groupsIncomplete?: string;
  /** The provider's claims as it sent them (nested objects and arrays kept), for claim rules. */
  readonly claims: Readonly<Record<string, unknown>>;
  /** Bearer tokens only: the client application (`azp`, else `appid`). */
  readonly application?: string;
  /** Bearer tokens only: the scopes granted (`scp`, else `scope`, split at spaces). */
  readonly scopes?: readonly string[];
}

/** Who is asking, as rules see it: the signed-in user's names and the facts about them. */
export interface Caller {
  /** The provider alias the caller signed in with. */
  readonly provider: string;
  /** The -ID value (`sub`, the directory's `oid`, GitHub's numeric id). */
  readonly userId: string;
  /** The -NAME value. */
  readonly userName: string;
  readonly access: AccessFacts;
}

/** Facts with nothing in them: a caller they describe passes only rules that ask for no fact. */
export const NO_FACTS: AccessFacts = Object.freeze({ groups: [], roles: [], claims: {} });
