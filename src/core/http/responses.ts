// Decisions that answer the request directly.
import { createHash } from 'node:crypto';

import { MAX_RETURN_URL_LENGTH } from '../return-url.js';
import type { RespondDecision } from './request-view.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
} as const;

export interface CookieSpec {
  readonly name: string;
  readonly value: string;
  readonly path?: string;
  readonly maxAgeSeconds?: number;
  readonly secure: boolean;
  /** Default Lax. `Unset`: no attribute (the browser's default), for cross-site POSTs over plain http, where None is not allowed. */
  readonly sameSite?: 'Lax' | 'Strict' | 'None' | 'Unset';
}

/**
 * Whether browsers keep a cookie of this name only when it is set with Secure: the `__Secure-`
 * and `__Host-` prefixes (RFC 6265bis §4.1.3, matched regardless of case).
 */
export function nameRequiresSecure(name: string): boolean {
  return /^__(?:secure|host)-/i.test(name);
}

/** A Set-Cookie value; always HttpOnly; Secure on https, and always for a prefixed name. `maxAgeSeconds: 0` deletes. */
export function setCookie(spec: CookieSpec): string {
  const parts = [`${spec.name}=${spec.value}`, `Path=${spec.path ?? '/'}`, 'HttpOnly'];
  if (spec.sameSite !== 'Unset') parts.push(`SameSite=${spec.sameSite ?? 'Lax'}`);
  if (spec.secure || spec.sameSite === 'None' || nameRequiresSecure(spec.name)) parts.push('Secure');
  if (spec.maxAgeSeconds !== undefined) {
    parts.push(`Max-Age=${spec.maxAgeSeconds}`);
    if (spec.maxAgeSeconds === 0) parts.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  }
  return parts.join('; ');
}

type Extra = { readonly cookies?: readonly string[]; readonly headers?: Readonly<Record<string, string>> };

function withCookies(
  headers: Record<string, string | readonly string[]>,
  extra: Extra,
): Record<string, string | readonly string[]> {
  return {
    ...headers,
    ...extra.headers,
    ...(extra.cookies && extra.cookies.length > 0 ? { 'Set-Cookie': extra.cookies } : {}),
  };
}

export function jsonDecision(status: number, value: unknown, extra: Extra = {}): RespondDecision {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  return {
    kind: 'respond',
    status,
    headers: withCookies({ 'Content-Type': JSON_TYPE, ...SECURITY_HEADERS }, extra),
    body,
  };
}

/** An answer without a body (for callers that are servers, not people). */
export function emptyDecision(status: number): RespondDecision {
  return { kind: 'respond', status, headers: { ...SECURITY_HEADERS }, body: Buffer.alloc(0) };
}

export function redirectDecision(location: string, extra: Extra = {}): RespondDecision {
  return {
    kind: 'respond',
    status: 302,
    headers: withCookies({ Location: location, ...SECURITY_HEADERS }, extra),
    body: Buffer.alloc(0),
  };
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A small self-contained page (no scripts, no external resources). */
export function pageDecision(
  status: number,
  title: string,
  message: string,
  extra: Extra = {},
  linksHtml = '',
): RespondDecision {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}</style></head>
<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>${linksHtml}</body></html>`;
  return {
    kind: 'respond',
    status,
    headers: withCookies(
      {
        'Content-Type': HTML_TYPE,
        ...SECURITY_HEADERS,
        'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
        'X-Frame-Options': 'DENY',
      },
      extra,
    ),
    body: Buffer.from(html, 'utf8'),
  };
}

/**
 * A small page that `frameAncestor` (an origin) alone may show in a frame: the answer to a
 * provider's front-channel logout, which its logout page loads in an iframe. Everything else
 * about it is as strict as every other page.
 */
export function framedPageDecision(title: string, message: string, frameAncestor: string): RespondDecision {
  const page = pageDecision(200, title, message);
  const headers: Record<string, string | readonly string[]> = {
    ...page.headers,
    'Content-Security-Policy': `default-src 'none'; style-src 'unsafe-inline'; frame-ancestors ${frameAncestor}`,
  };
  delete headers['X-Frame-Options'];
  return { ...page, headers };
}

/** A link on one of gatehouse's pages: where it goes, and what it says. */
export interface PageLink {
  readonly href: string;
  readonly text: string;
}

/** Links as a paragraph of a page, escaped. */
export function linksParagraph(links: readonly PageLink[]): string {
  if (links.length === 0) return '';
  return `<p>${links.map((link) => `<a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a>`).join(' · ')}</p>`;
}

/**
 * An error for a browser (page) or an API client (JSON `{"error"}`), as the caller prefers.
 * `links` are for the page only: what a person can do next (an API client has its own way back).
 */
export function errorDecision(
  status: number,
  title: string,
  message: string,
  json: boolean,
  extra: Extra = {},
  links: readonly PageLink[] = [],
): RespondDecision {
  return json
    ? jsonDecision(status, { error: message }, extra)
    : pageDecision(status, title, message, extra, linksParagraph(links));
}

/**
 * A sign-in redirect that keeps the URL fragment (login.preserveUrlFragmentsForLogins).
 * Browsers never send `#…` to a server, so a tiny script appends it to the
 * return URL before going to the login route. The script is pinned by hash in
 * the page's CSP; without JavaScript, a link signs in without the fragment.
 */
export function fragmentPreservingRedirect(
  loginPrefix: string,
  returnTo: string,
  cookies: readonly string[],
): RespondDecision {
  // JSON.stringify plus escaping `<` keeps the values inside the script as data.
  const literal = (value: string) => JSON.stringify(value).replace(/</g, '\\u003c');
  // Without the fragment when it would make the return URL longer than sign-in accepts.
  const script = `var r=${literal(returnTo)},f=r+location.hash;location.replace(${literal(loginPrefix)}+encodeURIComponent(f.length>${MAX_RETURN_URL_LENGTH}?r:f));`;
  const hash = createHash('sha256').update(script).digest('base64');
  const fallback = escapeHtml(`${loginPrefix}${encodeURIComponent(returnTo)}`);
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signing in…</title><script>${script}</script></head><body><noscript><p><a href="${fallback}">Sign in</a></p></noscript></body></html>`;
  return {
    kind: 'respond',
    status: 401,
    headers: {
      'Content-Type': HTML_TYPE,
      ...SECURITY_HEADERS,
      'Content-Security-Policy': `default-src 'none'; script-src 'sha256-${hash}'`,
      ...(cookies.length > 0 ? { 'Set-Cookie': cookies } : {}),
    },
    body: Buffer.from(html, 'utf8'),
  };
}
