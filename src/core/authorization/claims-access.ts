// The facts rules look at, read from an OpenID provider's claims (the ID
// token's with the userinfo endpoint's, or a bearer token's).
import type { GraphGroupsLookup } from '../providers/graph-groups.js';
import type { AccessFacts } from './access-facts.js';
import { claimPath, claimValues } from './claim-values.js';

/** Where a provider's groups and roles are found among its claims (dotted paths). */
export interface ClaimSources {
  readonly groups: string;
  readonly roles: string;
  /** The directory only: the groups of a group overage asked of Microsoft Graph, at sign-in and refresh. */
  readonly graph?: GraphGroupsLookup;
}

export const DEFAULT_CLAIM_SOURCES: ClaimSources = Object.freeze({ groups: 'groups', roles: 'roles' });

/** Protocol plumbing a rule has no business with. */
const PROTOCOL_CLAIMS = new Set(['nonce', 'at_hash', 'c_hash', 's_hash']);

export const GROUP_OVERAGE_MESSAGE =
  'the directory sent a reference to the groups in place of them (the user is in more groups than a token carries: the group overage), and gatehouse does not look them up in Microsoft Graph; have the directory send only the groups assigned to the application (groupMembershipClaims "ApplicationGroup"), or allow by app roles';

/** The refusal's reason when the Graph lookup for an overage did not tell the groups. */
export function graphLookupFailedMessage(reason: string): string {
  return `the directory sent a reference to the groups in place of them (the group overage), and looking them up in Microsoft Graph failed: ${reason}`;
}

/**
 * Whether the directory left the groups out for too many (Microsoft's group overage): it then
 * names them in `_claim_names` (or says `hasgroups` in a token of the implicit flow).
 */
function groupOverage(claims: Readonly<Record<string, unknown>>, source: string): boolean {
  if (source !== 'groups') return false;
  const names = claims._claim_names;
  const referenced = typeof names === 'object' && names !== null && Object.hasOwn(names, 'groups');
  return referenced || claims.hasgroups === true || claims.hasgroups === 'true';
}

/** The address, when the provider says it verified it (`email_verified`: true, or "true" as some providers write it). */
function verifiedEmail(claims: Readonly<Record<string, unknown>>): string | undefined {
  const { email, email_verified: verified } = claims;
  if (typeof email !== 'string' || email === '') return undefined;
  return verified === true || verified === 'true' ? email : undefined;
}

/** The claims a record keeps for claim rules: all but the protocol's own. */
function keptClaims(claims: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const name of Object.keys(claims)) if (!PROTOCOL_CLAIMS.has(name)) kept[name] = claims[name];
  return kept;
}

function scopesOf(claims: Readonly<Record<string, unknown>>): string[] {
  const granted = claims.scp ?? claims.scope;
  if (typeof granted === 'string') return granted.split(' ').filter((scope) => scope !== '');
  if (Array.isArray(granted)) return granted.filter((scope): scope is string => typeof scope === 'string');
  return [];
}

export function accessFromClaims(
  claims: Readonly<Record<string, unknown>>,
  sources: ClaimSources = DEFAULT_CLAIM_SOURCES,
): AccessFacts {
  const email = verifiedEmail(claims);
  return {
    ...(email !== undefined ? { verifiedEmail: email } : {}),
    groups: claimValues(claims, claimPath(sources.groups)),
    roles: claimValues(claims, claimPath(sources.roles)),
    ...(groupOverage(claims, sources.groups) ? { groupsIncomplete: GROUP_OVERAGE_MESSAGE } : {}),
    claims: keptClaims(claims),
  };
}

/** A bearer token's facts: its claims', with the client application and the scopes it was granted. */
export function accessFromBearerClaims(
  claims: Readonly<Record<string, unknown>>,
  sources: ClaimSources = DEFAULT_CLAIM_SOURCES,
): AccessFacts {
  const application =
    typeof claims.azp === 'string' ? claims.azp : typeof claims.appid === 'string' ? claims.appid : undefined;
  return {
    ...accessFromClaims(claims, sources),
    ...(application !== undefined ? { application } : {}),
    scopes: scopesOf(claims),
  };
}
