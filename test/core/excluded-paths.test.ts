import { expect } from 'chai';

import {
  canonicalPath,
  ExcludedPathError,
  matchExcludedPath,
  parseExcludedPaths,
} from '../../src/core/excluded-paths.js';

describe('excluded paths', () => {
  const rules = parseExcludedPaths(['/health', '/public/*', '/.well-known/acme-challenge/*', '/café/*']);
  const match = (path: string) => matchExcludedPath(rules, path)?.source;

  const excluded: Array<[string, string]> = [
    ['/health', '/health'],
    ['/public', '/public/*'],
    ['/public/', '/public/*'],
    ['/public/app.js', '/public/*'],
    ['/public/img/logo%20big.png', '/public/*'],
    // Below the rule's own part, escapes of ordinary characters are the app's business.
    ['/public/%7Euser/p%61ge', '/public/*'],
    ['/.well-known/acme-challenge/token', '/.well-known/acme-challenge/*'],
    // Accented letters, composed (NFC) or not (NFD, as macOS names files), and other scripts fold into letters.
    ['/public/caf%C3%A9.png', '/public/*'],
    ['/public/cafe%CC%81.png', '/public/*'],
    ['/public/%E5%9B%BE%E7%89%87.png', '/public/*'],
    // Dots and blanks inside a segment are ordinary characters.
    ['/public/.well-known/a%20b.c', '/public/*'],
    ['/public/x.y/a..b', '/public/*'],
    // A rule's non-ASCII characters arrive percent-encoded, in either case of hex digits.
    ['/caf%C3%A9/menu', '/café/*'],
    ['/caf%c3%a9', '/café/*'],
  ];
  for (const [path, rule] of excluded) {
    it(`exempts ${path}`, () => expect(match(path)).to.equal(rule));
  }

  // Every one of these names (or could be read as) a protected path: it must stay protected.
  const bypasses = [
    '/public/../admin',
    '/public/%2e%2e/admin',
    '/public/%2E%2E/admin',
    '/public/.%2e/admin',
    '/public/%252e%252e/admin',
    '/public/..%2fadmin',
    '/public%2f..%2fadmin',
    '/public/..\\admin',
    '/public/%5c..%5cadmin',
    '/public/./../admin',
    '//public/../admin',
    '/public//../admin',
    '/public;/../admin',
    '/public/..;/admin',
    '/public%3b/admin',
    // The rule's own part spelled otherwise than browsers send it: an app that routes on the path
    // as sent (Express) would not take it for the excluded one, and could route it to a protected one.
    '/p%75blic/app.js',
    '/%70ublic/',
    '/h%65alth',
    '/caf%C3%A9%2fmenu',
    '/cafe%CC%81/menu',
    '/publicity',
    '/public-data',
    '/PUBLIC/app.js',
    '/Health',
    '/health/',
    '/health/extra',
    '/health%00',
    '/health%0a',
    '/admin',
    '/',
    'public/app.js',
    '/public/%',
    // Unicode look-alikes that compatibility folding (NFKC) turns into "/", "." or "\\".
    '/public/%EF%BC%8E%EF%BC%8E%EF%BC%8Fadmin', // fullwidth ．．／
    '/public/x%EF%BC%8F..%EF%BC%8F..%EF%BC%8Fadmin',
    '/public/%E2%80%A4%E2%80%A4/admin', // one-dot leader ․․
    '/public/%E2%80%A5/admin', // two-dot leader ‥
    '/public/%E2%80%A6/admin', // ellipsis … (three dots)
    '/public/%EF%BC%BC..%EF%BC%BCadmin', // fullwidth reverse solidus ＼
    '/public/%EF%B9%94/admin', // small semicolon ﹔
    // Segments that end in dots or blanks: Windows (IIS, and apps that follow its path rules)
    // trims them, so `/public/.. /admin` is read as `/public/../admin`, that is `/admin`.
    '/public/..%20/admin',
    '/public/.../admin',
    '/public/.%20/admin',
    '/public/..%20%20./admin',
    '/public/x./../admin',
    '/public/x./admin',
    '/public/x%20/admin',
    '/public/x.',
    '/public/x%20',
    '/health.',
    '/health%20',
    '/public/..%E3%80%80/admin', // ideographic space, a blank once folded (NFKC)
  ];
  for (const path of bypasses) {
    it(`protects ${JSON.stringify(path)}`, () => expect(match(path)).to.equal(undefined));
  }

  it('never looks at the query or fragment (callers pass the path only)', () => {
    expect(match('/admin?x=/public/a')).to.equal(undefined);
    expect(canonicalPath('/health?x')).to.equal(null);
  });

  it('`/*` alone exempts every canonical path', () => {
    const all = parseExcludedPaths(['/*']);
    expect(matchExcludedPath(all, '/anything/here')?.source).to.equal('/*');
    expect(matchExcludedPath(all, '/a/../b')).to.equal(undefined);
  });

  it('refuses rules that are not canonical absolute paths', () => {
    for (const bad of ['health', '/a/../b', '/a*', '/a/*/b', '/a//b', '/a%2fb', '/a;b', '/a./*', '/a /b', '/a/...']) {
      expect(() => parseExcludedPaths([bad]), bad).to.throw(ExcludedPathError);
    }
  });
});
