// Every authorization rule of a configuration: providers' own gates (Easy
// Auth's directory policy), the ordered path rules and the default.
import type { AccessRule } from './access-rule.js';
import type { PathRule } from './path-rule.js';

export interface AuthorizationPolicy {
  /** Rules every caller of a provider must pass, whatever the path (by alias). */
  readonly gates: ReadonlyMap<string, readonly AccessRule[]>;
  /** In order; the first that fits a request decides. */
  readonly paths: readonly PathRule[];
  /** For requests no path rule fits; undefined: any signed-in caller. */
  readonly fallback: AccessRule | undefined;
}

/** Any signed-in caller anywhere. */
export const OPEN_POLICY: AuthorizationPolicy = Object.freeze({ gates: new Map(), paths: [], fallback: undefined });

export function policyRestricts(policy: AuthorizationPolicy): boolean {
  return policy.gates.size > 0 || policy.paths.length > 0 || policy.fallback !== undefined;
}
