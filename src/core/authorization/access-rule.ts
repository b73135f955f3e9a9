// A rule: a list of allow entries, any one of which lets a caller in; whoever
// none lets in is refused.
import type { AuthorizationRefusalReason } from '../auth-metrics.js';
import type { Caller } from './access-facts.js';
import { judgeEntry, type AllowEntry } from './allow-entry.js';

export interface AccessRule {
  /** Where it is configured, for logs and the refusal's metric: `default`, `paths[0]`, `aad.allowedPrincipals`. */
  readonly name: string;
  readonly allow: readonly AllowEntry[];
}

/** Why a rule refused: no entry fits, or the one that might have needs groups the provider did not send. */
export type RefusalReason = AuthorizationRefusalReason;

export function judgeRule(rule: AccessRule, caller: Caller): RefusalReason | undefined {
  let incomplete = false;
  for (const entry of rule.allow) {
    const verdict = judgeEntry(entry, caller);
    if (verdict === 'allowed') return undefined;
    if (verdict === 'incomplete') incomplete = true;
  }
  return incomplete ? 'groups_incomplete' : 'not_allowed';
}
