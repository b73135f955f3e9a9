// gatehouse.identityAssertion: the signed identity assertion header is on when the key is present
// (`{}` for the defaults), off without it (docs/headers.md#signed-identity-assertion).
import { z } from 'zod';

/** How long an assertion is valid by default: short, as the app checks it on each request. */
export const DEFAULT_ASSERTION_LIFETIME_MS = 5 * 60_000;
/** The shortest lifetime that may be set: an assertion must outlive the request it rides on, clock skew included. */
export const SHORTEST_ASSERTION_LIFETIME_MS = 30_000;
/** The longest: the key ring keeps a retired key published this long at most (key-ring.ts). */
export const LONGEST_ASSERTION_LIFETIME_MS = 60 * 60_000;

/** `hh:mm:ss`, as the document's other durations are written. */
const LIFETIME = /^(\d{2}):([0-5]\d):([0-5]\d)$/;

function lifetimeMs(text: string): number {
  const [, hours, minutes, seconds] = LIFETIME.exec(text) ?? [];
  return ((Number(hours) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1000;
}

/** The document's `gatehouse.identityAssertion`. */
export const identityAssertionSchema = z.object({
  /** The `aud` claim; default the origin the request was made to. */
  audience: z
    .string()
    .regex(/^[^\u0000-\u001f\u007f]{1,512}$/, 'expected 1 to 512 characters, none a control character')
    .optional(),
  lifetime: z
    .string()
    .regex(LIFETIME, { error: 'expected a time span "hh:mm:ss"', abort: true })
    .refine(
      (text) => lifetimeMs(text) >= SHORTEST_ASSERTION_LIFETIME_MS && lifetimeMs(text) <= LONGEST_ASSERTION_LIFETIME_MS,
      'expected from 00:00:30 to 01:00:00',
    )
    .optional(),
});

export interface IdentityAssertionSettings {
  /** The `aud` claim; undefined: the origin the request was made to (the app's). */
  readonly audience: string | undefined;
  /** `exp` - `iat`, in ms. */
  readonly lifetimeMs: number;
}

/** The document's object (checked by the schema), with its defaults; undefined when the key is absent. */
export function identityAssertionSettings(
  given: z.infer<typeof identityAssertionSchema> | undefined,
): IdentityAssertionSettings | undefined {
  if (given === undefined) return undefined;
  return {
    audience: given.audience,
    lifetimeMs: given.lifetime === undefined ? DEFAULT_ASSERTION_LIFETIME_MS : lifetimeMs(given.lifetime),
  };
}
