// Return URLs as a browser takes them (property): whatever is asked for, a location sign-in
// accepts leads, once the browser resolves it against the page it is on, to this app's
// origin or to an allowed one exactly, never through gatehouse's own routes, and is one a
// Location header can carry as it is.
import { expect } from 'chai';
import fc from 'fast-check';

import { challengeReturnUrl, MAX_RETURN_URL_LENGTH, validateReturnUrl } from '../../src/core/return-url.js';

const APP = 'https://app.example';
const PARTNER = 'https://partner.example:8443';
const ALLOWED = [PARTNER, 'https://app.example/ignored/path'];
/** The page the browser is on when it follows the redirect: the callback, or logout. */
const PAGES = [`${APP}/.auth/login/corp/callback`, `${APP}/.auth/logout`, `${APP}/deep/er/page?x=1`];

/** Pieces of the tricks that have opened redirects elsewhere, and of ordinary URLs. */
const piece = fc.constantFrom(
  '/', '//', '\\', '%2f', '%2F', '%5c', '%5C', '%252f', '%255c', '%09', '%0a', '%0d', '%00', '\t', '\n', ' ', '%20',
  '.', '..', '%2e', '%2E', '%252e', ';', '@', '%40', ':', '%3a', '?', '#', '%23', '%3f', '&', '=', '%', '%%', '%zz',
  'https:', 'http:', 'javascript:', 'data:', 'HTTPS:', 'https://', 'http://', 'evil.example', 'app.example', 'partner.example',
  ':8443', ':443', 'partner.example:8443', 'app.example.evil', '.auth', '/.auth', '/.auth/login/done', '/.auth/login/corp',
  '/.auth/logout', 'login', 'done', 'next=', 'redirect_uri=', 'post_login_redirect_uri=', 'x', 'é', '\u3000', '\u2028',
  '\uff0f', '\u2215', '\u00a0', '\ufeff', '[', ']', '::1', '127.0.0.1', '0x7f', 'user:pass@', 'a@b',
);
const asked = fc.oneof(
  fc.array(piece, { minLength: 1, maxLength: 10 }).map((parts) => parts.join('')),
  // Mostly well-formed beginnings, so that deeper checks are reached as well.
  fc.tuple(fc.constantFrom('/', '//', '/\\', 'https://', `${PARTNER}/`, `${APP}/`), fc.array(piece, { maxLength: 8 })).map(([start, parts]) => start + parts.join('')),
);

/** The origin, and the path under it, that a browser on `page` goes to when sent `location`. */
function followed(location: string, page: string): URL {
  return new URL(location, page);
}

/** The path as a server that decodes percent-escapes reads it (malformed escapes left as they are). */
function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

describe('return URLs as browsers follow them (property)', () => {
  it('an accepted location leads to this app or an allowed origin exactly, never back into gatehouse, and fits a Location header', () => {
    fc.assert(
      fc.property(asked, (raw) => {
        const verdict = validateReturnUrl(raw, ALLOWED);
        if (!verdict.ok) {
          expect(verdict.reason, raw).to.be.a('string').and.not.equal('');
          return;
        }
        const { location } = verdict;
        // Printable ASCII only: what a header carries unchanged, and what no browser drops or rewrites.
        expect(location, raw).to.match(/^[\x21-\x7e]+$/);
        expect(location.length).to.be.at.most(MAX_RETURN_URL_LENGTH);
        for (const page of PAGES) {
          const url = followed(location, page);
          expect([APP, PARTNER], `${raw} → ${location} on ${page}`).to.include(url.origin);
          expect(url.username + url.password, raw).to.equal('');
          if (url.origin === APP) {
            // Back into gatehouse only to its done pages, in any spelling the browser resolves.
            if (url.pathname === '/.auth' || url.pathname.startsWith('/.auth/')) expect(['/.auth/login/done', '/.auth/logout/done'], raw).to.include(url.pathname);
            // Nor through an escaped spelling a server decodes (`/.auth/%6cogin/corp`).
            const decoded = decodedPath(url.pathname);
            expect(decoded.toLowerCase().startsWith('/.auth/') && !['/.auth/login/done', '/.auth/logout/done'].includes(decoded), raw).to.equal(false);
          }
        }
        // What is sent is itself accepted, unchanged: validating it again (a login restarted with it) leads to the same place.
        expect(validateReturnUrl(location, ALLOWED), raw).to.deep.equal({ ok: true, location });
      }),
      { numRuns: 20_000 },
    );
  });

  it('without an allow-list, nothing accepted leaves the app', () => {
    fc.assert(
      fc.property(asked, (raw) => {
        const verdict = validateReturnUrl(raw);
        if (verdict.ok) for (const page of PAGES) expect(followed(verdict.location, page).origin, raw).to.equal(APP);
      }),
      { numRuns: 10_000 },
    );
  });

  it('where a challenge sends the browser back to is always a location sign-in accepts', () => {
    fc.assert(
      fc.property(asked, asked, (path, query) => {
        const back = challengeReturnUrl(`/${path}`, query);
        expect(validateReturnUrl(back), `${path} ? ${query}`).to.deep.include({ ok: true });
      }),
      { numRuns: 5_000 },
    );
  });
});
