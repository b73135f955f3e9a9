// Request headers a client could use to make the app believe something gatehouse did not
// check: where the request came from, which origin or port it was sent to, or which path it is
// for. An app trusts gatehouse as its proxy, so whatever gatehouse passes on, it believes.
//
// - Path overrides (`X-Original-URL`, `X-Rewrite-URL`) are dropped always: frameworks that
//   honour them (Zend/Laminas, older Symfony, IIS URL Rewrite setups) route to that path instead,
//   so a request to an excluded path could reach a protected one that gatehouse never judged.
// - Spellings of the X-Forwarded-* headers gatehouse sets, with `_` or `.` for `-`, are dropped
//   always: CGI-style servers (WSGI, PHP) merge `X_Forwarded_Host` into the same variable as
//   `X-Forwarded-Host`, so the client's value could override gatehouse's.
// - With no trusted proxy in front (`forwardProxy.convention` NoProxy), gatehouse is the edge:
//   every other forwarding header (any `X-Forwarded-*`, such as `-Port` and `-Prefix`,
//   `Forwarded`, `X-Real-IP`) can only be the client's own claim, and is dropped. Behind a
//   trusted proxy they are that proxy's to set, and pass.

const SET_BY_GATEHOUSE = new Set(['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']);
const PATH_OVERRIDES = new Set(['x-original-url', 'x-rewrite-url']);

/** A header name as CGI-style servers read it: `_` and `.` taken for `-`. */
function cgiName(name: string): string {
  return name.includes('_') || name.includes('.') ? name.replace(/[_.]/g, '-') : name;
}

/**
 * Whether a client's request header (its lower-case name, as node gives it) is left out of
 * what the app receives. The three X-Forwarded-* headers gatehouse sets, in their own spelling,
 * are not: forwardHeaders replaces or extends them itself.
 */
export function isSpoofedForwarding(name: string, behindTrustedProxy: boolean): boolean {
  const first = name.charCodeAt(0);
  // Every name concerned starts with "x" or "f": the other headers are answered at once.
  if (first !== 0x78 && first !== 0x66) return false;
  const read = cgiName(name);
  if (PATH_OVERRIDES.has(read)) return true;
  if (SET_BY_GATEHOUSE.has(read)) return read !== name;
  if (behindTrustedProxy) return false;
  return read.startsWith('x-forwarded-') || read === 'forwarded' || read === 'x-real-ip';
}
