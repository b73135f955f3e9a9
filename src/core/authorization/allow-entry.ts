// One allow entry of a rule: who it lets in. Every condition it names must
// hold (a provider, and any of its emails, and any of its groups...); an entry
// that names none lets in every signed-in caller (of its provider, if it names one).
import { claimValues } from './claim-values.js';
import type { Caller } from './access-facts.js';
import { asciiLowerCase, emailDomain } from './email-domain.js';

export interface ClaimCondition {
  /** As configured, for logs: `realm_access.roles`. */
  readonly name: string;
  readonly path: readonly string[];
  readonly values: ReadonlySet<string>;
}

export interface AllowEntry {
  /** Only callers signed in with this provider (its alias). */
  readonly provider?: string;
  /** Verified addresses, ASCII letters lower-cased. */
  readonly emails?: ReadonlySet<string>;
  /** -ID values, exactly. */
  readonly subjects?: ReadonlySet<string>;
  /** -NAME values, ASCII letters lower-cased. */
  readonly names?: ReadonlySet<string>;
  /** Domains of verified addresses, lower case. */
  readonly emailDomains?: ReadonlySet<string>;
  readonly groups?: ReadonlySet<string>;
  readonly roles?: ReadonlySet<string>;
  readonly claims?: readonly ClaimCondition[];
  /** Bearer tokens: the client applications (`azp`/`appid`). */
  readonly applications?: ReadonlySet<string>;
  /** Bearer tokens: any one of these scopes granted. */
  readonly scopes?: ReadonlySet<string>;
}

/** How an entry judged a caller: `incomplete` when it refused for want of groups the provider did not send. */
export type EntryVerdict = 'allowed' | 'refused' | 'incomplete';

function anyIn(values: readonly string[] | undefined, wanted: ReadonlySet<string>): boolean {
  if (values === undefined) return false;
  for (const value of values) if (wanted.has(value)) return true;
  return false;
}

export function judgeEntry(entry: AllowEntry, caller: Caller): EntryVerdict {
  const { access } = caller;
  if (entry.provider !== undefined && entry.provider !== caller.provider) return 'refused';
  if (entry.subjects !== undefined && !entry.subjects.has(caller.userId)) return 'refused';
  if (entry.names !== undefined && !entry.names.has(asciiLowerCase(caller.userName))) return 'refused';
  const email = access.verifiedEmail;
  if (entry.emails !== undefined && (email === undefined || !entry.emails.has(asciiLowerCase(email)))) return 'refused';
  if (entry.emailDomains !== undefined) {
    const domain = email === undefined ? undefined : emailDomain(email);
    if (domain === undefined || !entry.emailDomains.has(domain)) return 'refused';
  }
  if (entry.roles !== undefined && !anyIn(access.roles, entry.roles)) return 'refused';
  if (
    entry.applications !== undefined &&
    (access.application === undefined || !entry.applications.has(access.application))
  )
    return 'refused';
  if (entry.scopes !== undefined && !anyIn(access.scopes, entry.scopes)) return 'refused';
  for (const claim of entry.claims ?? [])
    if (!anyIn(claimValues(access.claims, claim.path), claim.values)) return 'refused';
  if (entry.groups !== undefined && !anyIn(access.groups, entry.groups))
    return access.groupsIncomplete !== undefined ? 'incomplete' : 'refused';
  return 'allowed';
}
