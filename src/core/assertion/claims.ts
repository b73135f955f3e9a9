// What an identity assertion says about the caller: who they are and how gatehouse saw them, and
// nothing secret. Never a token, a refresh token, a token secret or the provider's session id:
// the assertion travels to the app on every request, and may be logged there.
import type { Identity } from '../identity.js';

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

/** The assertion's claims for `identity`: the same for every identity object of one sign-in. */
export function assertedIdentity(identity: Identity): AssertedIdentity {
  const email = identity.claims.find((claim) => claim.typ === 'email')?.val;
  const groups = valuesOf(identity, GROUP_CLAIMS);
  const roles = valuesOf(identity, new Set([identity.roleType]));
  return {
    sub: identity.userId,
    idp: identity.provider,
    name: identity.userName,
    ...(email !== undefined ? { email } : {}),
    ...(groups !== undefined ? { groups } : {}),
    ...(roles !== undefined ? { roles } : {}),
  };
}
