// A caller as rules see them, from what a session record or a bearer identity holds.
import type { Claim } from '../identity.js';
import { NO_FACTS, type AccessFacts, type Caller } from './access-facts.js';

/**
 * The facts of a session made without them (no `access` in its record): its groups and roles
 * claims as strings, no verified address, claims flattened. Such a session passes rules of
 * groups and roles its claims name; an e-mail rule asks it to sign in again.
 */
function factsFromClaimList(claims: readonly Claim[]): AccessFacts {
  const groups: string[] = [];
  const roles: string[] = [];
  // No prototype: a claim named `constructor` or `toString` is a claim like any other, never
  // Object's own property read back as a value already held.
  const byName = Object.create(null) as Record<string, unknown>;
  for (const { typ, val } of claims) {
    if (typ === 'groups') groups.push(val);
    else if (typ === 'roles') roles.push(val);
    // As among a provider's claims, `__proto__` names no claim (claim-values.ts).
    if (typ === '__proto__') continue;
    const held = byName[typ];
    byName[typ] = held === undefined ? val : Array.isArray(held) ? [...(held as unknown[]), val] : [held, val];
  }
  return groups.length === 0 && roles.length === 0 && claims.length === 0
    ? NO_FACTS
    : { groups, roles, claims: byName };
}

export function callerOf(
  who: {
    readonly provider: string;
    readonly userId: string;
    readonly userName: string;
    readonly claims: readonly Claim[];
  },
  access: AccessFacts | undefined,
): Caller {
  return {
    provider: who.provider,
    userId: who.userId,
    userName: who.userName,
    access: access ?? factsFromClaimList(who.claims),
  };
}
