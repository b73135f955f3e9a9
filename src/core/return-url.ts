// Validation of post-login / post-logout return URLs: never an open redirect.

export type ReturnUrlVerdict =
  { readonly ok: true; readonly location: string } | { readonly ok: false; readonly reason: string };

/** Longest return URL accepted. */
export const MAX_RETURN_URL_LENGTH = 2048;
/** How many layers of percent-encoding are looked through for hidden tricks. */
const DECODE_LAYERS = 3;
/** Parameters through which an external return URL could carry another one (a redirect chain). */
const REDIRECT_PARAMETERS =
  /(^|[?&])(post_login_redirect_ur[il]|post_logout_redirect_ur[il]|redirect_uri|return_?url|returnto|next)=/i;
/** gatehouse's own pages a return URL may name; every other route under the prefix could chain. */
const SAFE_OWN_PAGES = ['/login/done', '/logout/done'];
/** Host-local base used to resolve relative paths; never emitted. */
const LOCAL_BASE = 'https://gatehouse.invalid';

/**
 * Each run of percent-escapes decoded as UTF-8 (what cannot be is U+FFFD), and a `%` that starts no
 * escape left as it is: one malformed escape (`#%%`) must not stop the rest of the URL from being
 * looked through, as it would with decodeURIComponent, which refuses the whole string.
 */
function decodeTolerantly(value: string): string {
  return value.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8'));
}

function decodeLayers(value: string): string[] {
  const layers = [value];
  let current = value;
  for (let i = 0; i < DECODE_LAYERS; i++) {
    const next = decodeTolerantly(current);
    if (next === current) break;
    layers.push(next);
    current = next;
  }
  return layers;
}

/**
 * Browsers drop tab, CR and LF anywhere in a URL and treat `\` as `/`;
 * any of them (or another control character), in any decoding layer, is refused.
 */
function hasSmuggling(layer: string): boolean {
  return /[\u0000-\u001f\u007f\\]/.test(layer);
}

function isRelativePath(layer: string): boolean {
  return layer.startsWith('/') && !layer.startsWith('//');
}

/** What makes a same-origin path unfit to return to, judged in each of its decoding layers, or undefined. */
function pathProblem(layers: readonly string[], apiPrefix: string): string | undefined {
  if (layers.some(hasSmuggling)) return 'control character or backslash';
  // Every decoding layer must still be a path on this origin.
  if (!layers.every(isRelativePath)) return 'scheme-relative';
  return throughOwnRoute(layers, apiPrefix) ? 'nested redirect through an authentication route' : undefined;
}

/**
 * Whether any decoding layer of a path (each starts with `/`) names one of gatehouse's routes under
 * `apiPrefix` other than its done pages, once its dot segments are resolved. Appended to a base
 * rather than resolved against it: an allowed URL's path may start with `//`. One that no URL
 * parser takes counts as a route (fail closed).
 */
function throughOwnRoute(layers: readonly string[], apiPrefix: string): boolean {
  return layers.some((layer) => {
    let path: string;
    try {
      path = new URL(`${LOCAL_BASE}${layer}`).pathname;
    } catch {
      return true;
    }
    return (
      (path === apiPrefix || path.startsWith(`${apiPrefix}/`)) && !SAFE_OWN_PAGES.includes(path.slice(apiPrefix.length))
    );
  });
}

/**
 * Where a challenged browser is sent back after signing in: the URL it asked for, if sign-in
 * accepts it as a return URL; else its path alone (a query too long, say); else `/` (a path that
 * is itself too long, or that sign-in refuses, such as one under gatehouse's own routes or with
 * an encoded backslash). Never one that sign-in refuses, which would be a 400 instead of a
 * sign-in for whoever followed the link.
 */
export function challengeReturnUrl(path: string, query: string, apiPrefix = '/.auth'): string {
  for (const candidate of query === '' ? [path] : [`${path}?${query}`, path]) {
    if (validateReturnUrl(candidate, [], apiPrefix).ok) return candidate;
  }
  return '/';
}

/**
 * Accepts a same-origin relative path (`/path?query#fragment`), or an
 * absolute http(s) URL whose origin exactly equals one of `allowedExternal`
 * (origins or URLs; only their origins count). Everything else is refused:
 * scheme-relative `//host`, `/\host`, encoded backslashes, control characters,
 * `https:host`, credentials (`http://allowed@evil`), other schemes, and
 * redirect chains: gatehouse's own routes under `apiPrefix` (login, logout,
 * callbacks; only its done pages are allowed), on this origin or an allowed
 * one, and external URLs that carry a return URL themselves. An app path's
 * own query is the app's business.
 */
export function validateReturnUrl(
  raw: string,
  allowedExternal: readonly string[] = [],
  apiPrefix = '/.auth',
): ReturnUrlVerdict {
  if (raw.length === 0) return { ok: false, reason: 'empty' };
  if (raw.length > MAX_RETURN_URL_LENGTH) return { ok: false, reason: 'too long' };
  const layers = decodeLayers(raw);

  if (raw.startsWith('/')) {
    const asked = pathProblem(layers, apiPrefix);
    if (asked !== undefined) return { ok: false, reason: asked };
    const resolved = new URL(raw, LOCAL_BASE);
    if (resolved.origin !== LOCAL_BASE) return { ok: false, reason: 'leaves the origin' };
    // What is sent passes the same checks as what was asked for: dot segments resolve away
    // (`/.//evil.example` is sent as `//evil.example`, which a browser reads as another host),
    // and so does a bare `?` or `#`.
    const location = `${resolved.pathname}${resolved.search}${resolved.hash}`;
    const sent = pathProblem(decodeLayers(location), apiPrefix);
    if (sent !== undefined) return { ok: false, reason: `${sent} once resolved` };
    return located(location);
  }
  if (layers.some(hasSmuggling)) return { ok: false, reason: 'control character or backslash' };
  if (layers.some((layer) => REDIRECT_PARAMETERS.test(layer))) return { ok: false, reason: 'nested redirect' };

  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'neither a path nor an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'scheme not allowed' };
  // `https:evil` parses as https://evil/; a real absolute URL spells out `//`.
  if (!/^https?:\/\//i.test(raw)) return { ok: false, reason: 'malformed absolute URL' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'credentials in URL' };
  const allowed = allowedExternal.some((entry) => {
    try {
      return new URL(entry).origin === url.origin;
    } catch {
      return false;
    }
  });
  if (!allowed) return { ok: false, reason: 'external origin not allowed' };
  // An allowed origin is often the app's own (or another app behind gatehouse): its authentication
  // routes chain redirects there as they would here.
  if (throughOwnRoute(decodeLayers(url.pathname), apiPrefix))
    return { ok: false, reason: 'nested redirect through an authentication route' };
  return located(url.href);
}

/**
 * The verdict for a location as it will be sent: percent-encoding can make it several times
 * longer than what was asked for (nine characters for each CJK character), and it must still fit
 * the limit, or the login transaction cookie that carries it would outgrow what browsers keep.
 */
function located(location: string): ReturnUrlVerdict {
  return location.length > MAX_RETURN_URL_LENGTH
    ? { ok: false, reason: 'too long once encoded' }
    : { ok: true, location };
}
