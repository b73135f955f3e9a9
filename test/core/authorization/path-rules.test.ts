// Which rule a request falls under: path rules in order (as excludedPaths are
// written), methods, the default; every spelling of a restricted path is held
// to its rule; verdicts remembered per caller and rule.
import { expect } from 'chai';
import fc from 'fast-check';

import type { AccessFacts, Caller } from '../../../src/core/authorization/access-facts.js';
import type { AccessRule } from '../../../src/core/authorization/access-rule.js';
import { Authorizer } from '../../../src/core/authorization/authorizer.js';
import { decodedPath, pathRule, rulesFor } from '../../../src/core/authorization/path-rule.js';
import { canonicalPath } from '../../../src/core/excluded-paths.js';

const admins: AccessRule = { name: 'paths.0', allow: [{ roles: new Set(['admin']) }] };
const writers: AccessRule = { name: 'paths.1', allow: [{ roles: new Set(['writer']) }] };
const staff: AccessRule = { name: 'default', allow: [{ groups: new Set(['staff']) }] };
const paths = [pathRule('/admin/*', undefined, admins), pathRule('/reports', ['POST', 'GET'], writers)];

describe('authorization path rules', () => {
  it('the first path rule that fits decides; the default takes the rest', () => {
    expect(rulesFor(paths, staff, 'GET', '/admin')).to.deep.equal([admins]);
    expect(rulesFor(paths, staff, 'GET', '/admin/users')).to.deep.equal([admins]);
    expect(rulesFor(paths, staff, 'GET', '/administrator')).to.deep.equal([staff]);
    expect(rulesFor(paths, staff, 'POST', '/reports')).to.deep.equal([writers]);
    expect(rulesFor(paths, staff, 'GET', '/reports/2026')).to.deep.equal([staff]);
    expect(rulesFor(paths, undefined, 'GET', '/other')).to.deep.equal([]);
    expect(rulesFor([], undefined, 'GET', '/admin')).to.deep.equal([]);
  });

  it('methods: only those listed, GET covering HEAD, in any case', () => {
    expect(rulesFor(paths, staff, 'HEAD', '/reports')).to.deep.equal([writers]);
    expect(rulesFor(paths, staff, 'post', '/reports')).to.deep.equal([writers]);
    expect(rulesFor(paths, staff, 'DELETE', '/reports')).to.deep.equal([staff]);
  });

  it('every spelling of a restricted path falls under its rule: case, escapes, Unicode forms, a trailing slash', () => {
    for (const path of [
      '/ADMIN/users',
      '/Admin',
      '/%61dmin/users',
      '/%41DMIN',
      '/admin/',
      '/\uff41dmin/users', // fullwidth a, which NFKC folds to "a"
      '/reports/',
      '/admin./users', // Windows and IIS trim dots and blanks at the end of a segment
      '/admin%20/users',
      '/admin.%20./users',
      '/ADMIN.',
    ])
      expect(rulesFor(paths, staff, 'POST', path), path).to.not.deep.equal([staff]);
  });

  it('a plain path is read as canonicalPath reads it, without its work (any path)', () => {
    for (const path of [
      '/',
      '/a/b/',
      "/a-b_c~d!$&'()*+,=:@/x.y",
      '/a/.well-known',
      '/a/b..c',
      '/%41',
      '/a;b',
      '/a?b',
      '/a#b',
      '/a//b',
      '/a/./b',
      '/a/..',
      '/a\\b',
      '/\u00e9',
      '/a b',
      'a',
    ])
      expect(decodedPath(path), path).to.equal(canonicalPath(path));
    const char = fc.constantFrom(..."/.%;?#\\ aZ09-_~!$&'()*+,=:@2e5cf\u00e9\uff0e\u0000".split(''));
    fc.assert(
      fc.property(fc.array(char, { maxLength: 12 }), (chars) => {
        const path = `/${chars.join('')}`;
        expect(decodedPath(path), path).to.equal(canonicalPath(path));
      }),
      { numRuns: 3000 },
    );
  });

  it('a path that cannot be read unambiguously falls under every rule', () => {
    for (const path of [
      '/public/../admin/users',
      '/public/%2e%2e/admin',
      '/admin%2fusers',
      '//admin/users',
      '/x;/admin',
      '/public\\..\\admin',
    ])
      expect(rulesFor(paths, staff, 'GET', path), path).to.deep.equal([admins, writers, staff]);
  });

  it('judges a caller by a rule once, and again only for a new caller (a refreshed session)', () => {
    let reads = 0;
    const access = Object.defineProperty({ roles: ['admin'], claims: {} }, 'groups', {
      get() {
        reads++;
        return ['staff'];
      },
    }) as unknown as AccessFacts;
    const caller: Caller = { provider: 'corp', userId: 'u', userName: 'n', access };
    const authorizer = new Authorizer({ gates: new Map(), paths, fallback: staff });
    for (let i = 0; i < 5; i++) expect(authorizer.refusal(caller, 'GET', '/home')).to.equal(undefined);
    expect(reads).to.equal(1);
    const refreshed: Caller = { ...caller };
    authorizer.refusal(refreshed, 'GET', '/home');
    expect(reads).to.equal(2);
    expect(authorizer.refusal(caller, 'GET', '/admin/x')).to.equal(undefined);
    expect(authorizer.refusal(caller, 'POST', '/reports')).to.deep.equal({ rule: writers, reason: 'not_allowed' });
  });

  it("a provider's gates come before every path rule, for its callers only", () => {
    const gate: AccessRule = { name: 'aad gate', allow: [{ groups: new Set(['g-1']) }] };
    const authorizer = new Authorizer({ gates: new Map([['aad', [gate]]]), paths: [], fallback: undefined });
    const access = { groups: ['staff'], roles: [], claims: {} };
    expect(authorizer.refusal({ provider: 'aad', userId: 'u', userName: 'n', access }, 'GET', '/')).to.deep.equal({
      rule: gate,
      reason: 'not_allowed',
    });
    expect(authorizer.refusal({ provider: 'corp', userId: 'u', userName: 'n', access }, 'GET', '/')).to.equal(
      undefined,
    );
    expect(authorizer.restrictsPath('GET', '/')).to.equal(false);
  });
});
