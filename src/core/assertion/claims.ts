// What an identity assertion says about the caller: who they are and how gatehouse saw them, and
// nothing secret. Never a token, a refresh token, a token secret or the provider's session id:
// the assertion travels to the app on every request, and may be logged there.
import type { Identity } from '../identity.js';

/** What authorization judged a caller by (its AccessFacts, taken at sign-in and refresh), as far as an assertion says it. */
export interface JudgedFacts {
  /** Only when the provider vouches for the address. */
  readonly verifiedEmail?: string;
  readonly groups: readonly string[];
  readonly roles: readonly string[];
}

/** The claims of an assertion besides iss, aud, iat and exp. */
export interface AssertedIdentity {
  readonly sub: string;
  /** The provider alias (the -IDP header). */
  readonly idp: string;
  /** The -NAME header's value. */
  readonly name: string;
  readonly email?: string;
  readonly groups?: readonly string[];
  readonly roles?: readonly string[];
}

/** The claim types groups arrive under (OpenID providers, Microsoft's directory). */
const GROUP_CLAIMS = new Set(['groups']);

/** The values of every claim of the given types, each once, in order. */
function valuesOf(identity: Identity, types: ReadonlySet<string>): string[] | undefined {
  const values: string[] = [];
  for (const claim of identity.claims) if (types.has(claim.typ) && !values.includes(claim.val)) values.push(claim.val);
  return values.length > 0 ? values : undefined;
}

/**
 * The assertion's claims for `identity`: the same for every identity object of one sign-in. With
 * the facts authorization rules judged the caller by (taken at sign-in and refresh), its groups,
 * roles and e-mail address are those (the address only when the provider vouches for it); without
 * them, the identity's groups and roles claims and its `email` claim when its `email_verified`
 * claim says true. An app trusts what a signed assertion says, so an address nobody vouched for is
 * never in one.
 */
export function assertedIdentity(identity: Identity, access?: JudgedFacts): AssertedIdentity {
  const email = access !== undefined ? access.verifiedEmail : verifiedEmailClaim(identity);
  const groups = access !== undefined ? nonEmpty(access.groups) : valuesOf(identity, GROUP_CLAIMS);
  const roles = access !== undefined ? nonEmpty(access.roles) : valuesOf(identity, new Set([identity.roleType]));
  return {
    sub: identity.userId,
    idp: identity.provider,
    name: identity.userName,
    ...(email !== undefined ? { email } : {}),
    ...(groups !== undefined ? { groups } : {}),
    ...(roles !== undefined ? { roles } : {}),
  };
}

/** The identity's `email` claim, when its `email_verified` claim says the provider vouches for it. */
function verifiedEmailClaim(identity: Identity): string | undefined {
  const verified = identity.claims.some((claim) => claim.typ === 'email_verified' && claim.val === 'true');
  return verified ? identity.claims.find((claim) => claim.typ === 'email')?.val : undefined;
}

function nonEmpty(values: readonly string[]): readonly string[] | undefined {
  return values.length > 0 ? values : undefined;
}
