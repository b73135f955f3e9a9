// The authorization decision: whether a signed-in caller may make a request.
// Rules are judged per caller and rule once, and remembered for as long as the
// caller's facts are (a session record, a validated bearer token): a session's
// requests after its first cost a path match and a lookup.
import type { Caller } from './access-facts.js';
import { judgeRule, type AccessRule, type RefusalReason } from './access-rule.js';
import { rulesFor } from './path-rule.js';
import { policyRestricts, type AuthorizationPolicy } from './policy.js';

export interface Refusal {
  readonly rule: AccessRule;
  readonly reason: RefusalReason;
}

/** What a rule said of a caller: undefined, allowed. */
type Verdict = RefusalReason | undefined;

export class Authorizer {
  readonly #verdicts = new WeakMap<Caller, Map<AccessRule, Verdict>>();
  readonly #restricts: boolean;

  constructor(readonly policy: AuthorizationPolicy) {
    this.#restricts = policyRestricts(policy);
  }

  /** Whether any rule is configured at all (else every signed-in caller is let in). */
  get restricts(): boolean {
    return this.#restricts;
  }

  /** Whether a rule of this path and method restricts who may come in (an anonymous caller is then challenged). */
  restrictsPath(method: string, path: string): boolean {
    return this.#restricts && rulesFor(this.policy.paths, this.policy.fallback, method, path).length > 0;
  }

  /** The first rule that refuses the caller this request, or undefined when every rule that applies lets them in. */
  refusal(caller: Caller, method: string, path: string): Refusal | undefined {
    if (!this.#restricts) return undefined;
    const gates = this.policy.gates.get(caller.provider);
    if (gates !== undefined) {
      for (const rule of gates) {
        const reason = this.#judged(caller, rule);
        if (reason !== undefined) return { rule, reason };
      }
    }
    for (const rule of rulesFor(this.policy.paths, this.policy.fallback, method, path)) {
      const reason = this.#judged(caller, rule);
      if (reason !== undefined) return { rule, reason };
    }
    return undefined;
  }

  #judged(caller: Caller, rule: AccessRule): Verdict {
    let verdicts = this.#verdicts.get(caller);
    if (verdicts === undefined) {
      verdicts = new Map();
      this.#verdicts.set(caller, verdicts);
    }
    if (verdicts.has(rule)) return verdicts.get(rule);
    const verdict = judgeRule(rule, caller);
    verdicts.set(rule, verdict);
    return verdict;
  }
}
