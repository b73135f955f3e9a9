// gatehouse.authorization in the configuration document: the rules as
// resolved, and the start errors that say what to fix.
import { expect } from 'chai';

import { AuthConfigError, resolveAuthConfig } from '../../../src/core/config/auth-config.js';
import type { GitHubProviderConfig, OidcProviderConfig } from '../../../src/core/config/provider-settings.js';

const corp = {
  registration: {
    clientId: 'app',
    openIdConnectConfiguration: {
      wellKnownOpenIdConfiguration: 'https://idp.example/.well-known/openid-configuration',
    },
  },
};
const gitHub = (login?: Record<string, unknown>) => ({
  registration: { clientId: 'gh', clientSecretSettingName: 'GH_SECRET' },
  ...(login ? { login } : {}),
});
const env = { GH_SECRET: 'x', FB_SECRET: 'y' };

function document(authorization: unknown, providers: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    identityProviders: { customOpenIdConnectProviders: { corp }, ...providers },
    gatehouse: { authorization },
  };
}

function problems(doc: unknown): string[] {
  try {
    resolveAuthConfig(doc, env);
  } catch (error) {
    expect(error).to.be.instanceOf(AuthConfigError);
    return [...(error as AuthConfigError).problems];
  }
  return expect.fail('expected a configuration error');
}

describe('gatehouse.authorization configuration', () => {
  it('resolves path rules in order, with methods, and the default', () => {
    const { config } = resolveAuthConfig(
      document({
        paths: [
          { path: '/admin/*', allow: [{ roles: ['admin'] }] },
          { path: '/reports', methods: ['post'], allow: [{ provider: 'corp', groups: ['writers'] }] },
        ],
        default: { allow: [{ emailDomains: ['Corp.Example'] }, { emails: ['Guest@Partner.Example'] }] },
      }),
      env,
    );
    const policy = config.authorization!;
    expect(policy.paths.map((p) => [p.source, p.rule.name, p.methods && [...p.methods]])).to.deep.equal([
      ['/admin/*', 'paths.0', undefined],
      ['/reports', 'paths.1', ['POST']],
    ]);
    expect(policy.paths[1]!.rule.allow).to.deep.equal([{ provider: 'corp', groups: new Set(['writers']) }]);
    expect(policy.fallback!.allow).to.deep.equal([
      { emailDomains: new Set(['corp.example']) },
      { emails: new Set(['guest@partner.example']) },
    ]);
  });

  it('no rules: any signed-in user, as without the section', () => {
    const { config } = resolveAuthConfig(document({}), env);
    expect(config.authorization!.paths).to.deep.equal([]);
    expect(config.authorization!.fallback).to.equal(undefined);
  });

  it('a rule that lets in nobody, or everybody by accident, stops the start and says what to fix', () => {
    expect(problems(document({ default: { allow: [] } }))).to.deep.equal([
      'gatehouse.authorization.default.allow: an empty list lets in nobody; list who may get in (an entry {"signedIn": true} lets in every signed-in user)',
    ]);
    expect(problems(document({ paths: [{ path: '/a', allow: [{ groups: [] }] }] }))).to.deep.equal([
      'gatehouse.authorization.paths.0.allow.0.groups: an empty list lets in nobody; list who may get in, or remove the key',
    ]);
    expect(problems(document({ default: { allow: [{ provider: 'corp' }] } }))).to.deep.equal([
      'gatehouse.authorization.default.allow.0: names no condition, so it would let in every signed-in user of corp; add one (emails, emailDomains, groups, roles, claims...), or say {"signedIn": true} if that is meant',
    ]);
    // An empty claims object names no claim: not a way to let everybody in either.
    expect(problems(document({ default: { allow: [{ claims: {} }] } }))).to.deep.equal([
      'gatehouse.authorization.default.allow.0: names no condition, so it would let in every signed-in user; add one (emails, emailDomains, groups, roles, claims...), or say {"signedIn": true} if that is meant',
    ]);
    const { config } = resolveAuthConfig(document({ default: { allow: [{ provider: 'corp', signedIn: true }] } }), env);
    expect(config.authorization!.fallback!.allow).to.deep.equal([{ provider: 'corp' }]);
  });

  it('an unknown provider or claim source is named, with the one most likely meant', () => {
    expect(problems(document({ default: { allow: [{ provider: 'crop', roles: ['a'] }] } }))).to.deep.equal([
      'gatehouse.authorization.default.allow.0.provider: "crop" is not an enabled provider (corp) (did you mean "corp"?)',
    ]);
    expect(problems(document({ claimSources: { copr: { roles: 'realm_access.roles' } } }))).to.deep.equal([
      'gatehouse.authorization.claimSources.copr: "copr" is not an enabled provider (corp) (did you mean "corp"?)',
    ]);
    expect(problems(document({ claimSources: { github: { groups: 'orgs' } } }, { gitHub: gitHub() }))).to.deep.equal([
      "gatehouse.authorization.claimSources.github: github's groups are its organisations and teams (GitHub's API, the read:org scope), not claims; remove this source",
    ]);
    const facebook = { registration: { appId: 'fb', appSecretSettingName: 'FB_SECRET' } };
    expect(
      problems(document({ default: { allow: [{ provider: 'facebook', groups: ['g'] }] } }, { facebook })),
    ).to.deep.equal([
      'gatehouse.authorization.default.allow.0: facebook tells no groups or roles, so this entry lets in nobody; allow its users by subjects or names (it does not say whether an address is verified)',
    ]);
  });

  it('unknown keys in a rule are errors (a misspelled condition would widen the entry), with the key meant', () => {
    const failure = (() => {
      try {
        resolveAuthConfig(document({ default: { allow: [{ groups: ['g'], rolse: ['r'] }] } }), env);
      } catch (error) {
        return error as AuthConfigError;
      }
      return expect.fail('expected a configuration error');
    })();
    expect(failure.problems.join('\n')).to.include('gatehouse.authorization.default.allow.0');
    expect(failure.warnings).to.deep.equal([
      'gatehouse.authorization.default.allow.0.rolse: unknown key, ignored (did you mean "roles"?)',
    ]);
  });

  it('bad values: a domain with "@" or Unicode, a path excludedPaths would refuse, a claim name, a method', () => {
    const found = problems(
      document({
        paths: [
          { path: '/a/../b', methods: ['GET /'], allow: [{ emailDomains: ['@corp.example', 'bücher.example'] }] },
          { path: 'admin', allow: [{ claims: { 'realm_access..roles': ['x'] } }] },
        ],
      }),
    );
    expect(found.join('\n')).to.include('gatehouse.authorization.paths.0.path');
    expect(found.join('\n')).to.include('gatehouse.authorization.paths.0.methods.0: expected an HTTP method');
    expect(found.join('\n')).to.include('without "@"');
    expect(found.join('\n')).to.include('xn--');
    expect(found.join('\n')).to.include('gatehouse.authorization.paths.1.path: expected an absolute path');
    expect(found.join('\n')).to.include('expected a claim name');
  });

  it('claim sources set where an OpenID provider’s groups and roles are read', () => {
    const { config } = resolveAuthConfig(document({ claimSources: { corp: { roles: 'realm_access.roles' } } }), env);
    expect((config.providers.get('corp') as OidcProviderConfig).claimSources).to.deep.equal({
      groups: 'groups',
      roles: 'realm_access.roles',
    });
  });

  it('GitHub: a group rule looks up organisations and teams, adding read:org, or asks for it when scopes are set', () => {
    const byGroup = { default: { allow: [{ groups: ['octo-org/admins'] }] } };
    const looked = resolveAuthConfig(document(byGroup, { gitHub: gitHub() }), env).config.providers.get(
      'github',
    ) as GitHubProviderConfig;
    expect(looked.organisations).to.equal(true);
    expect(looked.scopes).to.include('read:org');
    const plain = resolveAuthConfig(
      document({ default: { allow: [{ roles: ['r'] }] } }, { gitHub: gitHub() }),
      env,
    ).config.providers.get('github') as GitHubProviderConfig;
    expect(plain.organisations).to.equal(undefined);
    expect(plain.scopes).to.not.include('read:org');
    expect(problems(document(byGroup, { gitHub: gitHub({ scopes: ['read:user'] }) }))).to.deep.equal([
      'identityProviders.gitHub.login.scopes: a rule allows by group, and GitHub tells a user\'s organisations and teams only with the read:org scope; add "read:org"',
    ]);
  });
});
