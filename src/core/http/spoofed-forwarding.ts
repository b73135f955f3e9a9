// Request headers a client could use to make the app believe something gatehouse did not
// check: where the request came from, which origin or port it was sent to, or which path it is
// for. An app trusts gatehouse as its proxy, so whatever gatehouse passes on, it believes.
//
// - Path overrides (`X-Original-URL`, `X-Rewrite-URL`) are dropped always: frameworks that
//   honour them (Zend/Laminas, older Symfony, IIS URL Rewrite setups) route to that path instead,
//   so a request to an excluded path could reach a protected one that gatehouse never judged.
//   Method overrides (`X-HTTP-Method-Override`, `X-HTTP-Method`, `X-Method-Override`) likewise.
// - Spellings of the X-Forwarded-* headers gatehouse sets, with `_` or `.` for `-`, are dropped
//   always: CGI-style servers (WSGI, PHP) merge `X_Forwarded_Host` into the same variable as
//   `X-Forwarded-Host`, so the client's value could override gatehouse's.
// - With no trusted proxy in front (`forwardProxy.convention` NoProxy), gatehouse is the edge:
//   every other forwarding header (any `X-Forwarded-*`, such as `-Port` and `-Prefix`,
//   `Forwarded`, `X-Real-IP`, `True-Client-IP`, `X-Client-IP`, `X-Host`, `Front-End-Https`, …)
//   can only be the client's own claim, and is dropped. Behind a
//   trusted proxy they are that proxy's to set, and pass.

import { canonicalHeaderName } from './header-names.js';

/**
 * The forwarding headers gatehouse sets itself (lower case): the client's own are always replaced
 * (forward-edits.ts), and their other spellings always dropped (below).
 */
export const FORWARDING_HEADERS_SET_BY_GATEHOUSE: ReadonlySet<string> = new Set([
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
]);

// Canonical names (canonicalHeaderName: upper case, `_` and `.` read as `-`), as the shared core
// reads identity header aliases.
/**
 * Overrides of what gatehouse judged: the path (`X-Original-URL`, `X-Rewrite-URL`) and the method
 * (`X-HTTP-Method-Override` and its kin, which Rails, Laravel, ASP.NET and Express honour: an
 * anonymous CORS preflight the app would run as a DELETE).
 */
const OVERRIDES = new Set([
  'X-ORIGINAL-URL',
  'X-REWRITE-URL',
  'X-HTTP-METHOD-OVERRIDE',
  'X-HTTP-METHOD',
  'X-METHOD-OVERRIDE',
]);
/** Claims of where a request came from or was sent to, beside the X-Forwarded-* family, that servers and frameworks read. */
const CLIENT_CLAIMS = new Set([
  'FORWARDED',
  'X-FORWARDED',
  'X-REAL-IP',
  'TRUE-CLIENT-IP',
  'X-CLIENT-IP',
  'X-CLUSTER-CLIENT-IP',
  'X-PROXYUSER-IP',
  'X-HOST',
  'X-ORIGINAL-HOST',
  'X-URL-SCHEME',
  'FRONT-END-HTTPS',
]);

/**
 * Whether a client's request header (its lower-case name, as node gives it) is left out of
 * what the app receives. The three X-Forwarded-* headers gatehouse sets, in their own spelling,
 * are not: forwardHeaders replaces or extends them itself.
 */
export function isSpoofedForwarding(name: string, behindTrustedProxy: boolean): boolean {
  if (!mayConcernForwarding(name)) return false;
  const canonical = canonicalHeaderName(name);
  if (OVERRIDES.has(canonical)) return true;
  const lower = canonical.toLowerCase();
  if (FORWARDING_HEADERS_SET_BY_GATEHOUSE.has(lower)) return name !== lower;
  if (behindTrustedProxy) return false;
  return canonical.startsWith('X-FORWARDED-') || CLIENT_CLAIMS.has(canonical);
}

/** Every name concerned starts with `x`, `f` or `t` (in any case): the other headers are answered at once. */
export function mayConcernForwarding(name: string): boolean {
  const first = name.charCodeAt(0) | 0x20;
  return first === 0x78 || first === 0x66 || first === 0x74;
}
