// The values of one claim, named by a dotted path into the claims as the
// provider sent them: `groups`, or Keycloak's `realm_access.roles`.

/** Up to how many levels a claim name may reach into nested objects. */
export const MAX_CLAIM_DEPTH = 8;

/** The segments of a claim name: `realm_access.roles` → `realm_access`, `roles`. */
export function claimPath(name: string): readonly string[] {
  return name.split('.');
}

/**
 * The string values at `path`: a string, or each string of an array; numbers and booleans as
 * their JSON text. Own properties only (`constructor` or `__proto__` names no claim), and never
 * a string split into parts: `"admin staff"` is one value, not two.
 */
export function claimValues(claims: Readonly<Record<string, unknown>>, path: readonly string[]): string[] {
  let value: unknown = claims;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, segment))
      return [];
    value = (value as Record<string, unknown>)[segment];
  }
  if (Array.isArray(value)) return value.flatMap(scalarText);
  return scalarText(value);
}

function scalarText(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value === 'number' && Number.isFinite(value)) return [String(value)];
  if (typeof value === 'boolean') return [String(value)];
  return [];
}
