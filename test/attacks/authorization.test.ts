// A hostile client against authorization rules: spellings of a restricted path, methods, claim
// names that are Object's own, and the verdicts remembered per caller (docs/configuration.md,
// "Who may get in").
import { expect } from 'chai';

import type { Caller } from '../../src/core/authorization/access-facts.js';
import type { AccessRule } from '../../src/core/authorization/access-rule.js';
import { Authorizer } from '../../src/core/authorization/authorizer.js';
import { accessFromClaims } from '../../src/core/authorization/claims-access.js';
import { claimValues } from '../../src/core/authorization/claim-values.js';
import { pathRule } from '../../src/core/authorization/path-rule.js';
import { callerOf } from '../../src/core/authorization/record-caller.js';

const admins: AccessRule = { name: 'paths[0]', allow: [{ groups: new Set(['admins']) }] };
const everyone: AccessRule = { name: 'paths[1]', allow: [{}] };

function authorizer(rules = [pathRule('/admin/*', undefined, admins), pathRule('/*', undefined, everyone)]) {
  return new Authorizer({ gates: new Map(), paths: rules, fallback: undefined });
}

function member(groups: string[]): Caller {
  return { provider: 'corp', userId: 'u1', userName: 'Mallory', access: { groups, roles: [], claims: {} } };
}

describe('attacks on authorization rules', () => {
  describe('a restricted path in another spelling', () => {
    // Each is /admin/… to some server or app (case-insensitive file systems, decoding, Windows
    // trimming, NFKC-folding frameworks), or cannot be read unambiguously.
    const spellings = [
      '/Admin/x',
      '/ADMIN',
      '/admin/',
      '/%61dmin/x',
      '/ad%6Din/x',
      '/admin;x/y',
      '//admin/x',
      '/./admin/x',
      '/x/../admin',
      '/x/%2e%2e/admin',
      '/x%2f..%2fadmin',
      '/admin%2fx',
      '/%2561dmin/x',
      '/admin\\x',
      '/x\\..\\admin',
      '/admin./x',
      '/admin%20/x',
      '/admin%09/x',
      '/admin%00',
      '/ａｄｍｉｎ/x',
      '/%EF%BD%81dmin/x',
      '/x/%EF%BC%8E%EF%BC%8E/admin',
      '/admin%EF%BC%8Fx',
      '/%u0061dmin/x',
      '/%C0%AFadmin',
      '/admin/x',
    ];

    for (const path of spellings) {
      it(`${JSON.stringify(path)} is judged by the admin rule`, () => {
        const refusal = authorizer().refusal(member([]), 'GET', path);
        expect(refusal?.rule.name, path).to.equal('paths[0]');
        expect(authorizer().refusal(member(['admins']), 'GET', path), path).to.equal(undefined);
      });
    }

    it('a path merely beginning like the restricted one is not under it', () => {
      expect(authorizer().refusal(member([]), 'GET', '/administrator')).to.equal(undefined);
      expect(authorizer().refusal(member([]), 'GET', '/admin-old/x')).to.equal(undefined);
    });
  });

  describe('methods', () => {
    const byMethod = () =>
      authorizer([pathRule('/api/*', ['GET', 'DELETE'], admins), pathRule('/*', undefined, everyone)]);

    it('HEAD falls under a GET rule, and a method in any case under its rule', () => {
      for (const method of ['GET', 'HEAD', 'head', 'get', 'DELETE', 'delete', 'Delete'])
        expect(byMethod().refusal(member([]), method, '/api/x')?.rule.name, method).to.equal('paths[0]');
    });

    it('a method the rule does not name goes to the next rule', () => {
      expect(byMethod().refusal(member([]), 'POST', '/api/x')).to.equal(undefined);
    });
  });

  describe('remembered verdicts', () => {
    it('a refreshed caller with fewer groups is judged again, not by the old allow', () => {
      const gate = authorizer();
      const before = member(['admins']);
      expect(gate.refusal(before, 'GET', '/admin/x')).to.equal(undefined);
      const after = member([]);
      expect(gate.refusal(after, 'GET', '/admin/x')?.reason).to.equal('not_allowed');
    });

    it('a changed rule set judges a caller it allowed before afresh', () => {
      const who = member(['admins']);
      expect(authorizer().refusal(who, 'GET', '/admin/x')).to.equal(undefined);
      const stricter: AccessRule = { name: 'paths[0]', allow: [{ groups: new Set(['owners']) }] };
      const changed = authorizer([pathRule('/admin/*', undefined, stricter)]);
      expect(changed.refusal(who, 'GET', '/admin/x')?.rule).to.equal(stricter);
    });
  });

  describe('claims named after Object.prototype', () => {
    // A session record made without authorization facts keeps its claims as a list; its claims
    // read by name must be what the list says, as the same claims read from a provider are.
    const legacy = (typ: string, val: string) =>
      callerOf({ provider: 'corp', userId: 'u1', userName: 'Mallory', claims: [{ typ, val }] }, undefined);

    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty'])
      it(`a claim "${name}" of a session record is its values alone, as the provider's would be`, () => {
        const fromRecord = legacy(name, 'admin').access.claims;
        const fromProvider = accessFromClaims(JSON.parse(`{"${name}":"admin"}`) as Record<string, unknown>).claims;
        expect(claimValues(fromRecord, [name])).to.deep.equal(claimValues(fromProvider, [name]));
        // `__proto__` names no claim, from a provider or a record; the others are the claim's values alone.
        const expected = name === '__proto__' ? [] : ['admin'];
        expect(claimValues(fromRecord, [name])).to.deep.equal(expected);
        expect(JSON.stringify(Object.entries(fromRecord))).to.equal(
          JSON.stringify(name === '__proto__' ? [] : [[name, 'admin']]),
        );
      });

    it('a claim "__proto__" gives the record no other claims', () => {
      const { claims } = legacy('__proto__', 'admin').access;
      expect(claimValues(claims, ['0'])).to.deep.equal([]);
      expect(claimValues(claims, ['length'])).to.deep.equal([]);
      expect('length' in claims).to.equal(false);
    });
  });
});
