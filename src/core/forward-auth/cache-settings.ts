// gatehouse.verifyCache: whether a web server may keep the verify endpoint's allowed answers, and
// for how long (docs/forward-auth.md#caching-verify-answers). Off without the key: every request
// is asked about. `{}` keeps an answer for a session at most a second.
import { z } from 'zod';

/** How long an allowed answer may be kept when the document says nothing more. */
export const DEFAULT_VERIFY_CACHE_SECONDS = 1;
/**
 * The longest that may be set: a logout, an expired session or a revoked grant goes unnoticed for
 * up to this long on a request the web server answers from its cache.
 */
export const LONGEST_VERIFY_CACHE_SECONDS = 60;

/** The document's `gatehouse.verifyCache`. */
export const verifyCacheSchema = z.object({
  /** Whole seconds, 1 to 60. */
  maxAgeSeconds: z
    .number()
    .int('expected a whole number of seconds')
    .min(1, 'expected at least 1 second (leave verifyCache out to keep nothing)')
    .max(LONGEST_VERIFY_CACHE_SECONDS, `expected at most ${LONGEST_VERIFY_CACHE_SECONDS} seconds`)
    .optional(),
});

export interface VerifyCacheSettings {
  /** The longest any allowed answer may be kept, in whole seconds (at least 1). */
  readonly maxAgeSeconds: number;
}

/** The document's object (checked by the schema), with its defaults; undefined when the key is absent. */
export function verifyCacheSettings(
  given: z.infer<typeof verifyCacheSchema> | undefined,
): VerifyCacheSettings | undefined {
  if (given === undefined) return undefined;
  return { maxAgeSeconds: given.maxAgeSeconds ?? DEFAULT_VERIFY_CACHE_SECONDS };
}
