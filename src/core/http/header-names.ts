// Header names as the shared core compares them (docs/architecture.md#the-header-policy): ASCII letters upper-cased, `_` and
// `.` read as `-`, so that the spellings CGI-style servers merge (`X_Platform_Client_Principal`,
// `x.platform.client.principal`) are one name. The C++ core (binding/core/header_names.cpp)
// does the same; these are the TypeScript side's, used by the fallback and the header policy.

/** One UTF-16 unit of a canonical header name. */
function canonicalCharCode(c: number): number {
  if (c >= 0x61 && c <= 0x7a) return c - 0x20;
  return c === 0x5f || c === 0x2e ? 0x2d : c;
}

/** Upper-cases ASCII letters and reads `_` and `.` as `-`, as the C++ core does. */
export function canonicalHeaderName(name: string): string {
  let canonical = '';
  for (let i = 0; i < name.length; i++) canonical += String.fromCharCode(canonicalCharCode(name.charCodeAt(i)));
  return canonical;
}

/**
 * App Service's own identity header prefix: stripped always, whatever prefix is configured (an
 * app written for App Service trusts those names), as the C++ core does.
 */
export const APP_SERVICE_PREFIX = 'X-MS-';

/** Whether a canonical name is an identity header under `prefix` (a principal or a token header). */
export function namesIdentityUnder(canonical: string, prefix: string): boolean {
  return canonical.startsWith(`${prefix}CLIENT-PRINCIPAL`) || canonical.startsWith(`${prefix}TOKEN-`);
}

/** canonicalHeaderName(name).startsWith(canonicalPrefix), without building a string per name. */
export function hasCanonicalPrefix(name: string, canonicalPrefix: string): boolean {
  if (name.length < canonicalPrefix.length) return false;
  for (let i = 0; i < canonicalPrefix.length; i++)
    if (canonicalCharCode(name.charCodeAt(i)) !== canonicalPrefix.charCodeAt(i)) return false;
  return true;
}
