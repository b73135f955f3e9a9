// gatehouse.identityAssertion as the core runs on it: the signed identity assertion header is on
// when the key is present (`{}` for the defaults), off without it (docs/headers.md#signed-identity-assertion).

/** How long an assertion is valid by default: short, as the app checks it on each request. */
export const DEFAULT_ASSERTION_LIFETIME_MS = 5 * 60_000;
/** The shortest lifetime that may be set: an assertion must outlive the request it rides on, clock skew included. */
export const SHORTEST_ASSERTION_LIFETIME_MS = 30_000;
/** The longest: the key ring keeps a retired key published this long at most (key-ring.ts). */
export const LONGEST_ASSERTION_LIFETIME_MS = 60 * 60_000;

export interface IdentityAssertionSettings {
  /** The `aud` claim; undefined: the origin the request was made to (the app's). */
  readonly audience: string | undefined;
  /** `exp` - `iat`, in ms. */
  readonly lifetimeMs: number;
}

/** The document's object (already checked by the schema), with its defaults; undefined when the key is absent. */
export function identityAssertionSettings(
  given: { readonly audience?: string | undefined; readonly lifetime?: string | undefined } | undefined,
  lifetimeMs: (timeSpan: string) => number,
): IdentityAssertionSettings | undefined {
  if (given === undefined) return undefined;
  return {
    audience: given.audience,
    lifetimeMs: given.lifetime === undefined ? DEFAULT_ASSERTION_LIFETIME_MS : lifetimeMs(given.lifetime),
  };
}
