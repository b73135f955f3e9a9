// Authorization rules judged against callers: each kind of allow entry, and
// the hostile spellings that must not pass for what a rule allows.
import { expect } from 'chai';

import type { AccessFacts, Caller } from '../../../src/core/authorization/access-facts.js';
import { judgeRule, type AccessRule } from '../../../src/core/authorization/access-rule.js';
import type { AllowEntry } from '../../../src/core/authorization/allow-entry.js';
import { accessFromBearerClaims, accessFromClaims } from '../../../src/core/authorization/claims-access.js';
import { claimValues } from '../../../src/core/authorization/claim-values.js';
import { emailDomain, emailDomainProblem } from '../../../src/core/authorization/email-domain.js';
import { callerOf } from '../../../src/core/authorization/record-caller.js';

function caller(claims: Record<string, unknown>, extra: Partial<Caller> = {}): Caller {
  return {
    provider: 'corp',
    userId: typeof claims.sub === 'string' ? claims.sub : 'user-1',
    userName: typeof claims.name === 'string' ? claims.name : 'Alice',
    access: accessFromClaims(claims),
    ...extra,
  };
}

const rule = (...allow: AllowEntry[]): AccessRule => ({ name: 'test', allow });
const allowed = (entry: AllowEntry, who: Caller) => judgeRule(rule(entry), who) === undefined;

describe('authorization rules', () => {
  describe('verified e-mail domains', () => {
    const corp: AllowEntry = { emailDomains: new Set(['corp.example']) };

    it('let in a verified address of the domain, in any ASCII case', () => {
      expect(allowed(corp, caller({ email: 'alice@corp.example', email_verified: true }))).to.equal(true);
      expect(allowed(corp, caller({ email: 'Alice@CORP.Example', email_verified: true }))).to.equal(true);
      // Apple writes the flag as a string.
      expect(allowed(corp, caller({ email: 'alice@corp.example', email_verified: 'true' }))).to.equal(true);
    });

    it('refuse an address of the domain the provider has not verified, or says nothing about', () => {
      expect(allowed(corp, caller({ email: 'alice@corp.example', email_verified: false }))).to.equal(false);
      expect(allowed(corp, caller({ email: 'alice@corp.example' }))).to.equal(false);
      expect(allowed(corp, caller({ email: 'alice@corp.example', email_verified: 'yes' }))).to.equal(false);
    });

    it('refuse look-alikes: a longer domain, a subdomain, the domain as the local part, a trailing dot, Unicode', () => {
      for (const email of [
        'alice@corp.example.evil.example',
        'alice@evil-corp.example',
        'alice@sub.corp.example',
        'corp.example@evil.example',
        'alice@corp.example@evil.example',
        'alice@corp.example.',
        'alice@corp.ex\u0430mple', // Cyrillic а
        'alice@ｃｏｒｐ.example', // fullwidth letters
        'alice\uff20corp.example', // fullwidth @
        'alice@',
        '@corp.example',
      ])
        expect(allowed(corp, caller({ email, email_verified: true })), email).to.equal(false);
      const korp: AllowEntry = { emailDomains: new Set(['korp.example']) };
      expect(allowed(korp, caller({ email: 'alice@\u212aorp.example', email_verified: true }))).to.equal(false);
      expect(allowed(korp, caller({ email: 'alice@Korp.example', email_verified: true }))).to.equal(true);
    });

    it('take the domain after the last "@", lower-casing ASCII only', () => {
      expect(emailDomain('a@b@Corp.Example')).to.equal('corp.example');
      expect(emailDomain('K@\u212aelvin.example')).to.equal('\u212aelvin.example');
      expect(emailDomain('nobody')).to.equal(undefined);
    });

    it('are configured as ASCII domain names', () => {
      expect(emailDomainProblem('corp.example')).to.equal(undefined);
      expect(emailDomainProblem('xn--bcher-kva.example')).to.equal(undefined);
      expect(emailDomainProblem('@corp.example')).to.include('without "@"');
      expect(emailDomainProblem('bücher.example')).to.include('xn--');
      expect(emailDomainProblem('*.corp.example')).to.include('not a domain name');
      expect(emailDomainProblem('localhost')).to.include('not a domain name');
    });
  });

  describe('users', () => {
    it('by verified e-mail (any ASCII case), by subject (exactly), by name (any ASCII case)', () => {
      const alice = caller({ sub: 'u-1', name: 'Alice', email: 'alice@corp.example', email_verified: true });
      expect(allowed({ emails: new Set(['alice@corp.example']) }, alice)).to.equal(true);
      expect(
        allowed(
          { emails: new Set(['alice@corp.example']) },
          { ...alice, access: accessFromClaims({ email: 'alice@corp.example' }) },
        ),
      ).to.equal(false);
      expect(allowed({ subjects: new Set(['u-1']) }, alice)).to.equal(true);
      expect(allowed({ subjects: new Set(['U-1']) }, alice)).to.equal(false);
      expect(allowed({ names: new Set(['alice']) }, alice)).to.equal(true);
      expect(allowed({ names: new Set(['alice']) }, { ...alice, userName: '\u0430lice' })).to.equal(false);
    });

    it('a group name in the e-mail address gives no group', () => {
      const admins = caller({ email: 'admins@corp.example', email_verified: true, name: 'admins' });
      expect(allowed({ groups: new Set(['admins']) }, admins)).to.equal(false);
      expect(allowed({ roles: new Set(['admins']) }, admins)).to.equal(false);
    });
  });

  describe('groups, roles and claims', () => {
    it('a string claim or a member of an array claim; never a string split, never another case', () => {
      const member = caller({ groups: ['staff', 'admins'], roles: 'reader' });
      expect(allowed({ groups: new Set(['admins']) }, member)).to.equal(true);
      expect(allowed({ roles: new Set(['reader']) }, member)).to.equal(true);
      expect(allowed({ groups: new Set(['Admins']) }, member)).to.equal(false);
      expect(allowed({ roles: new Set(['admin']) }, caller({ roles: 'admin reader' }))).to.equal(false);
      expect(allowed({ roles: new Set(['admin']) }, caller({ roles: ['admin reader'] }))).to.equal(false);
      // A look-alike value is another value: a Cyrillic а, a fullwidth ａ.
      expect(allowed({ groups: new Set(['admins']) }, caller({ groups: ['\u0430dmins', '\uff41dmins'] }))).to.equal(
        false,
      );
      // A claim of another case is another claim.
      expect(allowed({ groups: new Set(['admins']) }, caller({ Groups: ['admins'] }))).to.equal(false);
      // An array written as a string is a string.
      expect(allowed({ groups: new Set(['admins']) }, caller({ groups: '["admins"]' }))).to.equal(false);
    });

    it('nested claims by dotted names, own properties only', () => {
      const keycloak = caller({ realm_access: { roles: ['admin'] }, 'realm_access.roles': ['other'] });
      const entry = (values: string[]): AllowEntry => ({
        claims: [{ name: 'realm_access.roles', path: ['realm_access', 'roles'], values: new Set(values) }],
      });
      expect(allowed(entry(['admin']), keycloak)).to.equal(true);
      expect(allowed(entry(['other']), keycloak)).to.equal(false);
      expect(claimValues({ a: { b: [1, true, 'x', { c: 'no' }, null] } }, ['a', 'b'])).to.deep.equal([
        '1',
        'true',
        'x',
      ]);
      expect(claimValues({}, ['constructor'])).to.deep.equal([]);
      expect(claimValues({ a: [] }, ['a', 'length'])).to.deep.equal([]);
      expect(claimValues({ a: 'text' }, ['a', 'length'])).to.deep.equal([]);
    });

    it("the directory's group overage refuses a group rule as incomplete, never allows it", () => {
      const overage = caller({
        _claim_names: { groups: 'src1' },
        _claim_sources: { src1: { endpoint: 'https://graph' } },
      });
      expect(overage.access.groupsIncomplete).to.include('group overage');
      expect(judgeRule(rule({ groups: new Set(['g-1']) }), overage)).to.equal('groups_incomplete');
      expect(judgeRule(rule({ roles: new Set(['r']) }), overage)).to.equal('not_allowed');
      expect(
        judgeRule(
          rule({ groups: new Set(['g-1']) }, { roles: new Set(['r']) }),
          caller({ roles: ['r'], hasgroups: true }),
        ),
      ).to.equal(undefined);
    });

    it("Google Workspace's hosted domain (hd) by claim; an account outside any Workspace has none", () => {
      const hd: AllowEntry = {
        provider: 'corp',
        claims: [{ name: 'hd', path: ['hd'], values: new Set(['corp.example']) }],
      };
      expect(allowed(hd, caller({ hd: 'corp.example', email: 'a@corp.example', email_verified: true }))).to.equal(true);
      expect(allowed(hd, caller({ email: 'a@gmail.example', email_verified: true }))).to.equal(false);
      expect(allowed(hd, caller({ hd: 'CORP.EXAMPLE' }))).to.equal(false);
    });

    it('claim sources: where groups and roles are read from', () => {
      const facts = accessFromClaims(
        { realm_access: { roles: ['admin'] }, grp: ['/staff'] },
        { groups: 'grp', roles: 'realm_access.roles' },
      );
      expect(facts.groups).to.deep.equal(['/staff']);
      expect(facts.roles).to.deep.equal(['admin']);
    });
  });

  describe('entries and rules', () => {
    it('every condition of an entry must hold; any entry of a rule lets in', () => {
      const alice = caller({ email: 'alice@corp.example', email_verified: true, groups: ['staff'] });
      const both: AllowEntry = { emailDomains: new Set(['corp.example']), groups: new Set(['admins']) };
      expect(allowed(both, alice)).to.equal(false);
      expect(judgeRule(rule(both, { groups: new Set(['staff']) }), alice)).to.equal(undefined);
      expect(allowed({}, alice)).to.equal(true);
      expect(allowed({ provider: 'corp' }, alice)).to.equal(true);
      expect(allowed({ provider: 'github' }, alice)).to.equal(false);
    });

    it("bearer tokens: the client application and the scopes granted (scp or scope), an app's roles", () => {
      const app: Caller = {
        provider: 'aad',
        userId: 'app-oid',
        userName: 'app-oid',
        access: accessFromBearerClaims({ azp: 'client-1', scp: 'orders.read orders.write', roles: ['Orders.Admin'] }),
      };
      expect(allowed({ applications: new Set(['client-1']) }, app)).to.equal(true);
      expect(allowed({ applications: new Set(['client-2']) }, app)).to.equal(false);
      expect(allowed({ scopes: new Set(['orders.write']) }, app)).to.equal(true);
      expect(allowed({ scopes: new Set(['orders']) }, app)).to.equal(false);
      expect(allowed({ roles: new Set(['Orders.Admin']) }, app)).to.equal(true);
      const legacy = accessFromBearerClaims({ appid: 'client-3', scope: 'a b' });
      expect(legacy.application).to.equal('client-3');
      expect(legacy.scopes).to.deep.equal(['a', 'b']);
      // A session's caller has neither.
      expect(allowed({ applications: new Set(['client-1']) }, caller({ azp: 'client-1' }))).to.equal(false);
    });

    it('a session made before its facts were kept is judged by its claims list, with no verified address', () => {
      const old = callerOf(
        {
          provider: 'corp',
          userId: 'u',
          userName: 'n',
          claims: [
            { typ: 'groups', val: 'staff' },
            { typ: 'roles', val: 'admin' },
            { typ: 'email', val: 'a@corp.example' },
          ],
        },
        undefined,
      );
      expect(old.access.groups).to.deep.equal(['staff']);
      expect(old.access.roles).to.deep.equal(['admin']);
      expect(allowed({ emailDomains: new Set(['corp.example']) }, old)).to.equal(false);
      const kept: AccessFacts = { groups: ['x'], roles: [], claims: {} };
      expect(callerOf({ provider: 'p', userId: 'u', userName: 'n', claims: [] }, kept).access).to.equal(kept);
    });
  });
});
