import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { AuthConfigError, resolveAuthConfig } from '../../../src/core/config/auth-config.js';
import type { OidcProviderConfig } from '../../../src/core/config/provider-settings.js';
import { loadAuthConfig } from '../../../src/core/config/load.js';

const provider = {
  registration: {
    clientId: 'gatehouse-app',
    clientCredential: { clientSecretSettingName: 'OIDC_SECRET' },
    openIdConnectConfiguration: {
      wellKnownOpenIdConfiguration: 'https://idp.example.com/.well-known/openid-configuration',
    },
  },
  login: {
    nameClaimType: 'preferred_username',
    scopes: ['profile', 'email'],
    loginParameters: ['prompt=login', 'domain_hint=example.com'],
  },
};
const minimal = { identityProviders: { customOpenIdConnectProviders: { corp: provider } } };
const env = { OIDC_SECRET: 'super-secret-value' };

function problems(document: unknown, environment: NodeJS.ProcessEnv = env): string[] {
  try {
    resolveAuthConfig(document, environment);
  } catch (error) {
    expect(error).to.be.instanceOf(AuthConfigError);
    return [...(error as AuthConfigError).problems];
  }
  expect.fail('expected a configuration error');
}

describe('authsettingsV2 configuration', () => {
  it('resolves a minimal document with safe defaults', () => {
    const { config, warnings } = resolveAuthConfig(minimal, env);
    expect(warnings).to.deep.equal([]);
    expect(config).to.include({
      enabled: true,
      requireAuthentication: true,
      unauthenticatedAction: 'RedirectToLoginPage',
      defaultProvider: 'corp',
      requireHttps: false,
      apiPrefix: '/.auth',
      preserveUrlFragmentsForLogins: false,
      app: 'default',
      headerPrefix: 'X-PLATFORM-',
      sessionCookieName: 'PlatformAuthSession',
      refreshWindowMs: 300_000,
      forwardCorsPreflights: false,
    });
    expect(config.cookieExpiration).to.deep.equal({ convention: 'FixedTime', lifetimeMs: 8 * 3_600_000 });
    expect(config.nonce).to.deep.equal({ validate: true, lifetimeMs: 300_000 });
    expect(config.tokenStore).to.deep.equal({
      enabled: true,
      directory: undefined,
      refreshExtensionMs: 72 * 3_600_000,
    });
    const corp = config.providers.get('corp') as OidcProviderConfig;
    expect(corp).to.include({
      clientId: 'gatehouse-app',
      clientSecret: 'super-secret-value',
      nameClaimType: 'preferred_username',
    });
    expect(corp.scopes).to.deep.equal(['openid', 'profile', 'email']);
    expect(corp.loginParameters).to.deep.equal({ prompt: 'login', domain_hint: 'example.com' });
  });

  it('reads every documented key', () => {
    const { config } = resolveAuthConfig(
      {
        platform: { enabled: true },
        globalValidation: {
          requireAuthentication: true,
          unauthenticatedClientAction: 'RejectWith404',
          redirectToProvider: 'corp',
          excludedPaths: ['/health', '/public/*'],
        },
        httpSettings: {
          requireHttps: true,
          routes: { apiPrefix: '/.auth' },
          forwardProxy: {
            convention: 'Custom',
            customHostHeaderName: 'X-Original-Host',
            customProtoHeaderName: 'X-Original-Proto',
          },
        },
        login: {
          tokenStore: { enabled: true, tokenRefreshExtensionHours: 12, fileSystem: { directory: '/var/gatehouse' } },
          allowedExternalRedirectUrls: ['https://app.example.com'],
          cookieExpiration: { convention: 'IdentityProviderDerived', timeToExpiration: '1.02:00:00' },
          nonce: { validateNonce: true, nonceExpirationInterval: '00:10:00' },
          preserveUrlFragmentsForLogins: true,
        },
        identityProviders: {
          customOpenIdConnectProviders: {
            corp: {
              registration: {
                clientId: 'c',
                openIdConnectConfiguration: {
                  authorizationEndpoint: 'https://idp/authorize',
                  tokenEndpoint: 'https://idp/token',
                  issuer: 'https://idp',
                  certificationUri: 'https://idp/jwks',
                },
              },
            },
          },
        },
        gatehouse: {
          app: 'shop',
          headerPrefix: 'X-MS-',
          sessionCookieName: 'AppServiceAuthSession',
          refreshWindowSeconds: 60,
          forwardCorsPreflights: true,
        },
      },
      {},
    );
    expect(config.unauthenticatedAction).to.equal('Return404');
    expect(config.excludedPaths.map((r) => r.source)).to.deep.equal(['/health', '/public/*']);
    expect(config.forwardProxy).to.deep.equal({
      convention: 'Custom',
      hostHeader: 'X-Original-Host',
      protoHeader: 'X-Original-Proto',
    });
    expect(config.tokenStore).to.deep.equal({
      enabled: true,
      directory: '/var/gatehouse',
      refreshExtensionMs: 12 * 3_600_000,
    });
    expect(config.cookieExpiration).to.deep.equal({
      convention: 'IdentityProviderDerived',
      lifetimeMs: 26 * 3_600_000,
    });
    expect(config.nonce.lifetimeMs).to.equal(600_000);
    expect((config.providers.get('corp') as OidcProviderConfig).endpoints).to.deep.equal({
      authorization: 'https://idp/authorize',
      token: 'https://idp/token',
      issuer: 'https://idp',
      jwksUri: 'https://idp/jwks',
    });
    expect(config).to.include({
      app: 'shop',
      headerPrefix: 'X-MS-',
      sessionCookieName: 'AppServiceAuthSession',
      refreshWindowMs: 60_000,
      forwardCorsPreflights: true,
    });
  });

  it('maps RejectWith401 to Return401 and AllowAnonymous to optional authentication', () => {
    expect(
      resolveAuthConfig({ ...minimal, globalValidation: { unauthenticatedClientAction: 'RejectWith401' } }, env).config
        .unauthenticatedAction,
    ).to.equal('Return401');
    const anonymous = resolveAuthConfig(
      { ...minimal, globalValidation: { unauthenticatedClientAction: 'AllowAnonymous' } },
      env,
    ).config;
    expect(anonymous.requireAuthentication).to.equal(false);
  });

  it('document problems that need more than one key are reported with the rest, each rule by its index', () => {
    const found = problems({
      globalValidation: { excludedPaths: ['/ok/*', 'public/*', '/a/*/b', '/x?y', '/a/../b', '/my%20docs/*'] },
      httpSettings: { forwardProxy: { convention: 'Custom' } },
      identityProviders: {
        customOpenIdConnectProviders: { corp: { registration: { clientId: '', openIdConnectConfiguration: {} } } },
      },
    });
    expect(found).to.deep.equal([
      'globalValidation.excludedPaths.1: expected an absolute path starting with "/", got "public/*"',
      'globalValidation.excludedPaths.2: "/a/*/b": "*" is allowed only as a final "/*" (everything below a path)',
      'globalValidation.excludedPaths.3: "/x?y" is not a canonical path (no "." or ".." segments, "//", ";", "?", "#", backslashes, control characters, encoded "/", ".", "%", or Unicode look-alikes of them)',
      'globalValidation.excludedPaths.4: "/a/../b" is not a canonical path (no "." or ".." segments, "//", ";", "?", "#", backslashes, control characters, encoded "/", ".", "%", or Unicode look-alikes of them)',
      'globalValidation.excludedPaths.5: "/my%20docs/*" has percent-escapes: write it decoded, as "/my docs/*"',
      'httpSettings.forwardProxy: convention Custom needs customHostHeaderName and/or customProtoHeaderName',
      'identityProviders.customOpenIdConnectProviders.corp.registration.clientId: clientId must not be empty',
    ]);
  });

  it('every error names its JSON path and what was expected, all at once', () => {
    const found = problems({
      globalValidation: { unauthenticatedClientAction: 'Redirect', excludedPaths: 'health' },
      httpSettings: { requireHttps: 'yes' },
      login: { cookieExpiration: { timeToExpiration: '8h' }, allowedExternalRedirectUrls: ['javascript:alert(1)'] },
      identityProviders: {
        customOpenIdConnectProviders: { corp: { registration: { clientId: '', openIdConnectConfiguration: {} } } },
      },
    });
    const text = found.join('\n');
    // One message per problem: a malformed time span is not also called "not positive".
    expect(found.filter((p) => p.startsWith('login.cookieExpiration.timeToExpiration'))).to.have.length(1);
    expect(text).to.match(/^globalValidation\.unauthenticatedClientAction: /m);
    expect(text).to.match(/^globalValidation\.excludedPaths: /m);
    expect(text).to.match(/^httpSettings\.requireHttps: .*boolean/m);
    expect(text).to.match(/^login\.cookieExpiration\.timeToExpiration: expected a time span/m);
    expect(text).to.match(/^login\.allowedExternalRedirectUrls\.0: expected an http\(s\) URL/m);
    expect(text).to.match(
      /^identityProviders\.customOpenIdConnectProviders\.corp\.registration\.clientId: clientId must not be empty/m,
    );
  });

  it('semantic errors name their paths too', () => {
    expect(
      problems(
        {
          identityProviders: {
            customOpenIdConnectProviders: {
              corp: { registration: { clientId: 'c', openIdConnectConfiguration: { issuer: 'https://idp' } } },
            },
          },
        },
        {},
      ),
    ).to.deep.equal([
      'identityProviders.customOpenIdConnectProviders.corp.registration.openIdConnectConfiguration: expected wellKnownOpenIdConfiguration, or all of authorizationEndpoint, tokenEndpoint, issuer and certificationUri',
      'identityProviders: authentication is required but no identity provider is enabled',
    ]);
    expect(problems(minimal, {})).to.deep.equal([
      'identityProviders.customOpenIdConnectProviders.corp.registration.clientCredential.clientSecretSettingName: environment variable OIDC_SECRET is not set',
    ]);
    expect(problems({ ...minimal, globalValidation: { redirectToProvider: 'nope' } })[0]).to.match(
      /^globalValidation\.redirectToProvider: "nope" is not an enabled provider \(corp\)/,
    );
    expect(problems({ ...minimal, httpSettings: { forwardProxy: { convention: 'Custom' } } })[0]).to.match(
      /^httpSettings\.forwardProxy: convention Custom needs/,
    );
    // A key that is not a plain name is quoted, so that it cannot pass for another path.
    expect(
      problems({ identityProviders: { customOpenIdConnectProviders: { 'bad alias!': provider } } }, env)[0],
    ).to.match(/^identityProviders\.customOpenIdConnectProviders\["bad alias!"\]: expected a provider alias/);
    expect(problems({ identityProviders: { customOpenIdConnectProviders: { 'a.b': provider } } }, env)[0]).to.match(
      /^identityProviders\.customOpenIdConnectProviders\["a\.b"\]: expected a provider alias/,
    );
    expect(problems({ ...minimal, globalValidation: { redirectToProvider: '\u001b[2Jnope\r\n' } })[0]).to.equal(
      'globalValidation.redirectToProvider: "\\u001b[2Jnope\\r\\n" is not an enabled provider (corp)',
    );
    expect(problems([])[0]).to.match(/^\(document\): /);
  });

  it('never puts a secret value into an error or warning', () => {
    const doc = { ...minimal, login: { cookieExpiration: { timeToExpiration: 'bad' } } };
    expect(problems(doc).join('\n')).not.to.contain('super-secret-value');
  });

  it("a secret written where its variable's name belongs is not repeated in the problem; a variable name is", () => {
    const named = (settingName: string, environment: Record<string, string>) =>
      problems(
        {
          identityProviders: {
            customOpenIdConnectProviders: {
              corp: {
                ...provider,
                registration: { ...provider.registration, clientCredential: { clientSecretSettingName: settingName } },
              },
            },
          },
        },
        environment,
      );
    // The value of another variable (the secret itself, pasted in place of the name of the variable that holds it).
    expect(named('Xq9-long-secret', { OIDC_SECRET: 'Xq9-long-secret' })[0]).to.match(
      /clientSecretSettingName: the environment variable it names \(not shown: .*\) is not set$/,
    );
    expect(named('SECRET_VALUE_IN_CAPS', { OTHER: 'SECRET_VALUE_IN_CAPS' })[0]).to.not.include('SECRET_VALUE_IN_CAPS');
    // Not written as variable names are (lower case, punctuation): not shown either.
    expect(named('4f1c9e0b7a', {})[0]).to.not.include('4f1c9e0b7a');
    expect(named('abc+def/ghi', {})[0]).to.not.include('abc+def');
    // A conventional name is shown: it is what the operator has to set.
    expect(named('CORP_CLIENT_SECRET', {})).to.deep.equal([
      'identityProviders.customOpenIdConnectProviders.corp.registration.clientCredential.clientSecretSettingName: environment variable CORP_CLIENT_SECRET is not set',
    ]);
    // Inherited members of the environment object are no variables.
    expect(named('constructor', {})[0]).to.match(/is not set$/);
    // A name no environment can hold is refused as such.
    expect(named('A=B', {})[0]).to.match(/clientSecretSettingName: expected an environment variable name/);
    expect(named('A\nB', {})[0]).to.match(/clientSecretSettingName: expected an environment variable name/);
  });

  it('durations are at most ten years: every date counted from them must be one a cookie, a record and a Date can hold', () => {
    const login = (settings: object) => problems({ ...minimal, login: settings }, env);
    expect(login({ cookieExpiration: { timeToExpiration: '99999999.00:00:00' } })).to.deep.equal([
      'login.cookieExpiration.timeToExpiration: expected at most 3650.00:00:00 (ten years)',
    ]);
    expect(login({ nonce: { nonceExpirationInterval: '999999999999999999999.00:00:00' } })).to.deep.equal([
      'login.nonce.nonceExpirationInterval: expected at most 3650.00:00:00 (ten years)',
    ]);
    expect(login({ tokenStore: { tokenRefreshExtensionHours: 1e308 } })).to.deep.equal([
      'login.tokenStore.tokenRefreshExtensionHours: expected at most 87600 hours (ten years)',
    ]);
    expect(problems({ ...minimal, gatehouse: { refreshWindowSeconds: 1e12 } }, env)).to.deep.equal([
      'gatehouse.refreshWindowSeconds: expected at most 315360000 seconds (ten years)',
    ]);
    expect(login({ cookieExpiration: { timeToExpiration: '00:00:00' } })).to.deep.equal([
      'login.cookieExpiration.timeToExpiration: expected a positive time span',
    ]);
    // As .NET reads a TimeSpan (Easy Auth's documents are read that way): a day is written as one, not as 24 hours.
    for (const text of ['24:00:00', '08:60:00', '00:00:60', '1.24:00:00']) {
      expect(login({ cookieExpiration: { timeToExpiration: text } }), text).to.deep.equal([
        'login.cookieExpiration.timeToExpiration: expected a time span "hh:mm:ss" or "d.hh:mm:ss" (hours 0-23, minutes and seconds 0-59)',
      ]);
    }
    expect(
      resolveAuthConfig({ ...minimal, login: { cookieExpiration: { timeToExpiration: '1.23:59:59' } } }, env).config
        .cookieExpiration.lifetimeMs,
    ).to.equal(((24 + 23) * 3600 + 59 * 60 + 59) * 1000);
    // Ten years itself is taken.
    const { config } = resolveAuthConfig(
      {
        ...minimal,
        login: {
          cookieExpiration: { timeToExpiration: '3650.00:00:00' },
          tokenStore: { tokenRefreshExtensionHours: 87600 },
        },
      },
      env,
    );
    expect(config.cookieExpiration.lifetimeMs).to.equal(3650 * 24 * 3600_000);
    expect(config.tokenStore.refreshExtensionMs).to.equal(87600 * 3600_000);
  });

  it("gatehouse.app: a name of 1 to 200 characters (it is part of the token store's key derivation)", () => {
    expect(problems({ ...minimal, gatehouse: { app: 'x'.repeat(201) } }, env)).to.deep.equal([
      'gatehouse.app: expected a name of 1 to 200 characters, none a control character',
    ]);
    expect(problems({ ...minimal, gatehouse: { app: 'shop\n' } }, env)).to.deep.equal([
      'gatehouse.app: expected a name of 1 to 200 characters, none a control character',
    ]);
    expect(resolveAuthConfig({ ...minimal, gatehouse: { app: 'Boutique « été » 2' } }, env).config.app).to.equal(
      'Boutique « été » 2',
    );
  });

  it('warns about unknown keys instead of failing, with the known key a misspelling most likely meant', () => {
    const { warnings } = resolveAuthConfig(
      {
        ...minimal,
        extra: 1,
        login: { tokenStor: {}, nonce: { validateNonse: true } },
        identityProviders: { customOpenIdConnectProviders: { corp: { ...provider, surprise: true } } },
      },
      env,
    );
    expect(warnings).to.have.members([
      'extra: unknown key, ignored',
      'login.tokenStor: unknown key, ignored (did you mean "tokenStore"?)',
      'login.nonce.validateNonse: unknown key, ignored (did you mean "validateNonce"?)',
      'identityProviders.customOpenIdConnectProviders.corp.surprise: unknown key, ignored',
    ]);
    expect(warnings).to.have.length(4);
  });

  it('a configuration that fails lists its unknown keys beside the problems: a misspelled key explains them', () => {
    const { identityProviders, ...rest } = minimal as { identityProviders: unknown };
    const failing = (document: unknown) => {
      try {
        resolveAuthConfig(document, env);
      } catch (error) {
        expect(error).to.be.instanceOf(AuthConfigError);
        return error as AuthConfigError;
      }
      throw new Error('expected the configuration to fail');
    };
    // Found after validation: the ignored key is why no provider is enabled.
    const resolving = failing({ ...rest, identityProvider: identityProviders });
    expect(resolving.problems).to.deep.equal([
      'identityProviders: authentication is required but no identity provider is enabled',
    ]);
    expect(resolving.warnings).to.deep.equal([
      'identityProvider: unknown key, ignored (did you mean "identityProviders"?)',
    ]);
    expect(resolving.message).to.match(
      /no identity provider is enabled\nand what was ignored \(a misspelled key\?\):\n {2}- identityProvider: unknown key, ignored \(did you mean "identityProviders"\?\)$/,
    );
    // Found by the schema.
    const schema = failing({
      ...minimal,
      globalValidation: { unauthenticatedClientAction: 'Nope', excludedPath: ['/public/*'] },
    });
    expect(schema.problems.join('\n')).to.contain('globalValidation.unauthenticatedClientAction');
    expect(schema.warnings).to.deep.equal([
      'globalValidation.excludedPath: unknown key, ignored (did you mean "excludedPaths"?)',
    ]);
    // Nothing unknown: the message lists the problems alone.
    expect(failing({ ...minimal, globalValidation: { unauthenticatedClientAction: 'Nope' } }).message).not.to.contain(
      'ignored',
    );
  });

  it("keys named like Object.prototype's members (constructor, toString, __proto__) are unknown keys, not a crash", () => {
    // As from a file: JSON.parse makes "__proto__" an ordinary key.
    const text = JSON.stringify({
      ...minimal,
      constructor: 1,
      login: { toString: 'x', nonce: { hasOwnProperty: true } },
      identityProviders: { customOpenIdConnectProviders: { corp: { ...provider, valueOf: 1 }, PROTO: provider } },
    })
      .replace('"PROTO"', '"__proto__"')
      .replace('"toString"', '"__proto__":{"polluted":true},"toString"');
    const { config, warnings } = resolveAuthConfig(JSON.parse(text), env);
    expect(warnings).to.have.members([
      'constructor: unknown key, ignored',
      'login.__proto__: unknown key, ignored',
      'login.toString: unknown key, ignored',
      'login.nonce.hasOwnProperty: unknown key, ignored',
      'identityProviders.customOpenIdConnectProviders.corp.valueOf: unknown key, ignored',
      // Never a provider: its alias would be the prototype of the provider list.
      'identityProviders.customOpenIdConnectProviders.__proto__: unknown key, ignored',
    ]);
    expect([...config.providers.keys()]).to.deep.equal(['corp']);
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
  });

  it('changing client id, issuer, audiences or signing metadata changes the provider fingerprint', () => {
    const base = resolveAuthConfig(minimal, env).config.providers.get('corp')!.fingerprint;
    const changed = (registration: object) =>
      resolveAuthConfig(
        {
          identityProviders: {
            customOpenIdConnectProviders: {
              corp: { ...provider, registration: { ...provider.registration, ...registration } },
            },
          },
        },
        env,
      ).config.providers.get('corp')!.fingerprint;
    expect(changed({ clientId: 'other' })).not.to.equal(base);
    expect(
      changed({
        openIdConnectConfiguration: {
          wellKnownOpenIdConfiguration: 'https://other.example.com/.well-known/openid-configuration',
        },
      }),
    ).not.to.equal(base);
    expect(changed({})).to.equal(base);
    // The secret is not part of it: rotating a client secret keeps sessions.
    expect(resolveAuthConfig(minimal, { OIDC_SECRET: 'rotated' }).config.providers.get('corp')!.fingerprint).to.equal(
      base,
    );
  });

  describe('identity provider blocks', () => {
    const all = {
      azureActiveDirectory: {
        registration: {
          openIdIssuer: 'https://login.microsoftonline.com/common/v2.0/',
          clientId: 'aad-app',
          clientSecretSettingName: 'AAD_SECRET',
        },
        login: { loginParameters: ['domain_hint=contoso.com', 'scope=openid offline_access'] },
        validation: {
          allowedAudiences: ['api://orders'],
          defaultAuthorizationPolicy: { allowedApplications: ['app-1'], allowedPrincipals: { identities: ['oid-1'] } },
        },
      },
      google: { registration: { clientId: 'g.apps', clientSecretSettingName: 'GOOGLE_SECRET' } },
      facebook: { registration: { appId: '123', appSecretSettingName: 'FB_SECRET' }, graphApiVersion: 'v21.0' },
      gitHub: { registration: { clientId: 'Iv1.x', clientSecretSettingName: 'GH_SECRET' } },
      twitter: { registration: { consumerKey: 'ck', consumerSecretSettingName: 'TW_SECRET' } },
      apple: {
        registration: { clientId: 'com.example.web', teamId: 'TEAM', keyId: 'KEY', privateKeySettingName: 'APPLE_KEY' },
      },
    };
    const secrets = {
      AAD_SECRET: 'a',
      GOOGLE_SECRET: 'g',
      FB_SECRET: 'f',
      GH_SECRET: 'h',
      TW_SECRET: 't',
      APPLE_KEY: 'pem',
    };

    it('every kind resolves under its alias, with its defaults', () => {
      const { config, warnings } = resolveAuthConfig(
        { identityProviders: all, globalValidation: { redirectToProvider: 'github' } },
        secrets,
      );
      expect(warnings).to.deep.equal([]);
      expect([...config.providers.keys()]).to.deep.equal(['aad', 'google', 'facebook', 'github', 'twitter', 'apple']);
      const aad = config.providers.get('aad') as OidcProviderConfig;
      expect(aad).to.include({
        kind: 'aad',
        discoveryUrl: 'https://login.microsoftonline.com/common/v2.0/.well-known/openid-configuration',
        nameClaimType: 'preferred_username',
      });
      expect(aad.directory).to.deep.equal({
        multiTenant: true,
        allowedTenants: [],
        allowedApplications: ['app-1'],
        allowedIdentities: ['oid-1'],
      });
      expect(aad.scopes).to.include('offline_access');
      expect(aad.loginParameters).to.deep.equal({ domain_hint: 'contoso.com' });
      const google = config.providers.get('google') as OidcProviderConfig;
      expect(google.loginParameters).to.include({ access_type: 'offline', prompt: 'consent' });
      expect(config.providers.get('facebook')).to.include({
        kind: 'facebook',
        graphApiVersion: 'v21.0',
        graphOrigin: 'https://graph.facebook.com',
      });
      expect(config.providers.get('github')).to.include({
        kind: 'github',
        webOrigin: 'https://github.com',
        apiBase: 'https://api.github.com',
      });
      expect(config.providers.get('twitter')).to.include({ kind: 'twitter', apiOrigin: 'https://api.twitter.com' });
      expect(config.providers.get('apple')).to.include({ kind: 'apple', responseMode: 'form_post' });
      expect(config.defaultProvider).to.equal('github');
      const single = resolveAuthConfig(
        {
          identityProviders: {
            azureActiveDirectory: {
              registration: {
                openIdIssuer: 'https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0',
                clientId: 'x',
              },
            },
          },
        },
        {},
      );
      expect((single.config.providers.get('aad') as OidcProviderConfig).directory!.multiTenant).to.equal(false);
    });

    it('login parameters: scope adds scopes and response_mode picks the callback (every OpenID kind); what gatehouse sets itself is ignored with a warning', () => {
      const login = {
        loginParameters: [
          'domain_hint=contoso.com',
          'scope=offline_access api://orders/read',
          'response_mode=form_post',
          'response_type=code id_token',
          'redirect_uri=https://elsewhere.example/cb',
        ],
      };
      const { config, warnings } = resolveAuthConfig(
        {
          identityProviders: {
            azureActiveDirectory: { ...all.azureActiveDirectory, login },
            google: { ...all.google, login },
            customOpenIdConnectProviders: {
              corp: { ...provider, login: { scopes: ['openid', 'email'], loginParameterNames: login.loginParameters } },
            },
          },
          globalValidation: { redirectToProvider: 'corp' },
        },
        { ...secrets, ...env },
      );
      for (const [alias, path, scopes] of [
        [
          'aad',
          'identityProviders.azureActiveDirectory',
          ['openid', 'profile', 'email', 'offline_access', 'api://orders/read'],
        ],
        ['google', 'identityProviders.google', ['openid', 'profile', 'email', 'offline_access', 'api://orders/read']],
        [
          'corp',
          'identityProviders.customOpenIdConnectProviders.corp',
          ['openid', 'email', 'offline_access', 'api://orders/read'],
        ],
      ] as const) {
        const oidc = config.providers.get(alias) as OidcProviderConfig;
        expect(oidc.responseMode, alias).to.equal('form_post');
        expect(oidc.scopes, alias).to.deep.equal(scopes);
        expect(oidc.loginParameters, alias).to.include({ domain_hint: 'contoso.com' });
        expect(oidc.loginParameters, alias).not.to.have.any.keys(
          'scope',
          'response_mode',
          'response_type',
          'redirect_uri',
        );
        for (const name of ['response_type', 'redirect_uri']) {
          expect(warnings, alias).to.include(
            `${path}.login.loginParameters: ${name} is set by gatehouse on every sign-in (authorization code flow with PKCE, the callback URL from the request's origin); this one is ignored`,
          );
        }
      }
      expect(warnings).to.have.length(6);
      const query = resolveAuthConfig(
        { identityProviders: { google: { ...all.google, login: { loginParameters: { response_mode: 'query' } } } } },
        secrets,
      );
      expect((query.config.providers.get('google') as OidcProviderConfig).responseMode).to.equal('query');
    });

    it('login parameters gatehouse cannot honour are problems: another response_mode, a bad scope token', () => {
      for (const [parameter, problem] of [
        [
          'response_mode=fragment',
          'identityProviders.google.login.loginParameters: response_mode "fragment": expected query or form_post (gatehouse cannot receive any other)',
        ],
        [
          'response_mode=form_post.jwt',
          'identityProviders.google.login.loginParameters: response_mode "form_post.jwt": expected query or form_post (gatehouse cannot receive any other)',
        ],
        ['scope=openid "x"', 'identityProviders.google.login.loginParameters: scope: "\\"x\\"" is not a scope token'],
      ] as const) {
        expect(
          () =>
            resolveAuthConfig(
              { identityProviders: { google: { ...all.google, login: { loginParameters: [parameter] } } } },
              secrets,
            ),
          parameter,
        )
          .to.throw(AuthConfigError)
          .with.property('problems')
          .that.deep.equals([problem]);
      }
    });

    it('redirectToProvider takes a built-in kind by its key or alias in any case (App Service writes "azureactivedirectory"), and a custom alias but for case', () => {
      const document = (redirectToProvider: string, customs: Record<string, unknown> = { Corp: provider }) => ({
        identityProviders: {
          azureActiveDirectory: all.azureActiveDirectory,
          gitHub: all.gitHub,
          customOpenIdConnectProviders: customs,
        },
        globalValidation: { redirectToProvider },
      });
      for (const [name, alias] of [
        ['azureactivedirectory', 'aad'],
        ['azureActiveDirectory', 'aad'],
        ['AAD', 'aad'],
        ['gitHub', 'github'],
        ['GitHub', 'github'],
        ['Corp', 'Corp'],
        ['corp', 'Corp'],
      ] as const) {
        expect(resolveAuthConfig(document(name), { ...secrets, ...env }).config.defaultProvider, name).to.equal(alias);
      }
      // Not enabled: not guessed.
      expect(() => resolveAuthConfig(document('google'), { ...secrets, ...env })).to.throw(
        AuthConfigError,
        'globalValidation.redirectToProvider: "google" is not an enabled provider',
      );
    });

    it('names the path of every missing secret and bad setting', () => {
      const found = problems({ identityProviders: all }, {}).join('\n');
      for (const path of [
        'azureActiveDirectory.registration.clientSecretSettingName',
        'google.registration.clientSecretSettingName',
        'facebook.registration.appSecretSettingName',
        'gitHub.registration.clientSecretSettingName',
        'twitter.registration.consumerSecretSettingName',
        'apple.registration.privateKeySettingName',
      ]) {
        expect(found).to.contain(`identityProviders.${path}: environment variable`);
      }
      expect(
        problems(
          {
            identityProviders: {
              facebook: { registration: { appId: '1', appSecretSettingName: 'F' }, graphApiVersion: '19' },
            },
          },
          { F: 'x' },
        )[0],
      ).to.match(/^identityProviders\.facebook\.graphApiVersion: expected a Graph API version/);
      expect(
        problems(
          { identityProviders: { apple: { registration: { clientId: 'c', privateKeySettingName: 'K' } } } },
          { K: 'pem' },
        )[0],
      ).to.equal('identityProviders.apple.registration: privateKeySettingName needs teamId and keyId');
      expect(problems({ identityProviders: { apple: { registration: { clientId: 'c' } } } }, {})[0]).to.match(
        /^identityProviders\.apple\.registration: expected privateKeySettingName/,
      );
      expect(problems({ identityProviders: { customOpenIdConnectProviders: { github: provider } } }, env)[0]).to.match(
        /^identityProviders\.customOpenIdConnectProviders\.github: "github" is the alias of a built-in provider/,
      );
      expect(problems({ identityProviders: { customOpenIdConnectProviders: { Done: provider } } }, env)[0]).to.match(
        /^identityProviders\.customOpenIdConnectProviders\.Done: "Done" is reserved \(\/\.auth\/login\/done is gatehouse's own page\)/,
      );
      // Sign-in paths ignore case, so two aliases may not differ only in it.
      expect(
        problems({ identityProviders: { customOpenIdConnectProviders: { Corp: provider, CORP: provider } } }, env),
      ).to.deep.equal([
        'identityProviders.customOpenIdConnectProviders.CORP: "CORP" differs from the alias "Corp" only in case (sign-in paths ignore case); choose another',
      ]);
      expect([
        ...resolveAuthConfig(
          {
            identityProviders: {
              customOpenIdConnectProviders: { Corp: provider, CORP: { ...provider, enabled: false } },
            },
          },
          env,
        ).config.providers.keys(),
      ]).to.deep.equal(['Corp']);
    });

    it('a disabled provider is not there', () => {
      const { config } = resolveAuthConfig(
        { identityProviders: { ...all, gitHub: { ...all.gitHub, enabled: false } } },
        secrets,
      );
      expect(config.providers.has('github')).to.equal(false);
    });
  });

  it('takes the Azure resource around a document as exported (az webapp auth show): its properties, with redirectToProvider as App Service writes it', () => {
    const resource = {
      id: '/subscriptions/0000/resourceGroups/rg/providers/Microsoft.Web/sites/app/config/authsettingsV2',
      name: 'authsettingsV2',
      type: 'Microsoft.Web/sites/config',
      location: 'East US 2',
      properties: {
        ...minimal,
        globalValidation: { redirectToProvider: 'corp', unauthenticatedClientAction: 'Return401' },
        clearInboundClaimsMapping: 'false',
      },
    };
    const { config, warnings } = resolveAuthConfig(resource, env);
    expect(config.providers.has('corp')).to.equal(true);
    expect(config.unauthenticatedAction).to.equal('Return401');
    expect(warnings).to.deep.equal(['clearInboundClaimsMapping: unknown key, ignored']);
    // A document of settings with a stray "properties" key is read as it is, the stray key warned about.
    const stray = resolveAuthConfig({ ...minimal, properties: { identityProviders: {} } }, env);
    expect(stray.config.providers.has('corp')).to.equal(true);
    expect(stray.warnings).to.deep.equal(['properties: unknown key, ignored']);
  });

  it('an App Service export as it comes: unregistered provider blocks left out with a warning, an empty fileSystem block the default directory', () => {
    const exported = {
      id: '/subscriptions/0000/resourceGroups/rg/providers/Microsoft.Web/sites/app/config/authsettingsV2',
      location: 'East US 2',
      name: 'authsettingsV2',
      properties: {
        clearInboundClaimsMapping: 'false',
        globalValidation: {
          redirectToProvider: 'azureactivedirectory',
          requireAuthentication: true,
          unauthenticatedClientAction: 'RedirectToLoginPage',
        },
        httpSettings: { forwardProxy: { convention: 'NoProxy' }, requireHttps: true, routes: { apiPrefix: '/.auth' } },
        identityProviders: {
          apple: { enabled: true, login: {}, registration: {} },
          azureActiveDirectory: {
            enabled: true,
            login: { disableWWWAuthenticate: false },
            registration: {
              clientId: 'aad-app',
              clientSecretSettingName: 'AAD_SECRET',
              openIdIssuer: 'https://sts.windows.net/60a52712-6791-451d-bdec-5021c5f60a64/v2.0',
            },
            validation: {
              allowedAudiences: [],
              defaultAuthorizationPolicy: { allowedApplications: ['aad-app'], allowedPrincipals: {} },
              jwtClaimChecks: {},
            },
          },
          facebook: { enabled: true, login: {}, registration: {} },
          gitHub: { enabled: true, login: {}, registration: {} },
          google: { enabled: true, login: {}, registration: {}, validation: {} },
          twitter: { enabled: false, registration: {} },
        },
        login: {
          allowedExternalRedirectUrls: [],
          cookieExpiration: { convention: 'FixedTime', timeToExpiration: '08:00:00' },
          nonce: { nonceExpirationInterval: '00:05:00', validateNonce: true },
          preserveUrlFragmentsForLogins: false,
          tokenStore: { enabled: true, fileSystem: {}, tokenRefreshExtensionHours: 72.0 },
        },
        platform: { enabled: true, runtimeVersion: '~1' },
      },
    };
    const { config, warnings } = resolveAuthConfig(exported, { AAD_SECRET: 'a' });
    expect([...config.providers.keys()]).to.deep.equal(['aad']);
    expect(config.defaultProvider).to.equal('aad');
    expect(config.tokenStore.directory).to.equal(undefined);
    expect(warnings).to.deep.equal([
      'identityProviders.google: no registration, so not enabled',
      'identityProviders.facebook: no registration, so not enabled',
      'identityProviders.gitHub: no registration, so not enabled',
      'identityProviders.apple: no registration, so not enabled',
      'clearInboundClaimsMapping: unknown key, ignored',
      'identityProviders.azureActiveDirectory.login.disableWWWAuthenticate: unknown key, ignored',
    ]);
    // Part of a registration is still a registration: its gaps are errors.
    expect(() =>
      resolveAuthConfig({ identityProviders: { google: { registration: { clientId: 'g.apps' } } } }, {}),
    ).to.throw(AuthConfigError, 'identityProviders.google.registration.clientSecretSettingName');
  });

  it("the directory's Easy Auth restrictions are kept: groups become rules every caller of it must pass, client applications narrow bearer tokens", () => {
    const aad = (validation: Record<string, unknown>) => ({
      identityProviders: {
        azureActiveDirectory: {
          registration: { openIdIssuer: 'https://login.microsoftonline.com/common/v2.0', clientId: 'aad-app' },
          validation,
        },
      },
    });
    const principals = resolveAuthConfig(
      aad({ defaultAuthorizationPolicy: { allowedPrincipals: { groups: ['g-1'], identities: ['oid-1'] } } }),
      {},
    ).config;
    const [principalRule] = principals.authorization!.gates.get('aad')!;
    expect(principalRule!.name).to.equal(
      'identityProviders.azureActiveDirectory.validation.defaultAuthorizationPolicy.allowedPrincipals',
    );
    expect(principalRule!.allow).to.deep.equal([{ subjects: new Set(['oid-1']) }, { groups: new Set(['g-1']) }]);
    // With groups, a listed identity is one way in of two: not a refusal at sign-in.
    expect((principals.providers.get('aad') as OidcProviderConfig).directory!.allowedIdentities).to.deep.equal([]);
    const claimChecks = resolveAuthConfig(aad({ jwtClaimChecks: { allowedGroups: ['g-2'] } }), {}).config;
    expect(claimChecks.authorization!.gates.get('aad')![0]!.allow).to.deep.equal([{ groups: new Set(['g-2']) }]);
    const applications = (validation: Record<string, unknown>) =>
      (resolveAuthConfig(aad(validation), {}).config.providers.get('aad') as OidcProviderConfig).directory!
        .allowedApplications;
    expect(applications({ jwtClaimChecks: { allowedClientApplications: ['app-1'] } })).to.deep.equal(['app-1']);
    expect(
      applications({
        defaultAuthorizationPolicy: { allowedApplications: ['app-1', 'app-2'] },
        jwtClaimChecks: { allowedClientApplications: ['app-2', 'app-3'] },
      }),
    ).to.deep.equal(['app-2']);
    expect(
      problems(
        aad({
          defaultAuthorizationPolicy: { allowedApplications: ['app-1'] },
          jwtClaimChecks: { allowedClientApplications: ['app-3'] },
        }),
        {},
      ),
    ).to.deep.equal([
      "identityProviders.azureActiveDirectory.validation: defaultAuthorizationPolicy.allowedApplications and jwtClaimChecks.allowedClientApplications have no application in common, so no application's token is let in; list the applications in one of them",
    ]);
    const empty = resolveAuthConfig(
      aad({
        defaultAuthorizationPolicy: { allowedPrincipals: { groups: [], identities: ['oid-1'] } },
        jwtClaimChecks: { allowedGroups: [], allowedClientApplications: [] },
      }),
      {},
    );
    expect(empty.warnings).to.deep.equal([]);
    expect(empty.config.authorization!.gates.size).to.equal(0);
    expect((empty.config.providers.get('aad') as OidcProviderConfig).directory!.allowedIdentities).to.deep.equal([
      'oid-1',
    ]);
  });

  it('registration.clientCredential.method: ClientSecretPost puts the secret in the token request body; no other method is taken', () => {
    const withMethod = (method: string) => ({
      identityProviders: {
        customOpenIdConnectProviders: {
          corp: {
            ...provider,
            registration: {
              ...provider.registration,
              clientCredential: { ...provider.registration.clientCredential, method },
            },
          },
        },
      },
    });
    expect(
      (resolveAuthConfig(withMethod('ClientSecretPost'), env).config.providers.get('corp') as OidcProviderConfig)
        .secretInBody,
    ).to.equal(true);
    expect((resolveAuthConfig(minimal, env).config.providers.get('corp') as OidcProviderConfig).secretInBody).to.equal(
      undefined,
    );
    expect(() => resolveAuthConfig(withMethod('ClientSecretBasic'), env)).to.throw(
      AuthConfigError,
      'identityProviders.customOpenIdConnectProviders.corp.registration.clientCredential.method:',
    );
  });

  describe('sources', () => {
    it('a file given with --config', () => {
      const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-config-')), 'auth.json');
      writeFileSync(file, JSON.stringify(minimal));
      expect(loadAuthConfig(file, env).source).to.equal(file);
    });

    it('GATEHOUSE_AUTH_CONFIG_JSON, else WEBSITE_AUTH_V2_CONFIG_JSON', () => {
      const json = JSON.stringify(minimal);
      expect(loadAuthConfig(undefined, { ...env, WEBSITE_AUTH_V2_CONFIG_JSON: json }).source).to.equal(
        'WEBSITE_AUTH_V2_CONFIG_JSON',
      );
      expect(
        loadAuthConfig(undefined, { ...env, GATEHOUSE_AUTH_CONFIG_JSON: json, WEBSITE_AUTH_V2_CONFIG_JSON: '{' })
          .source,
      ).to.equal('GATEHOUSE_AUTH_CONFIG_JSON');
    });

    it('a file written with a byte order mark (Windows editors, PowerShell 5) is read', () => {
      const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-config-')), 'auth.json');
      writeFileSync(file, `\ufeff${JSON.stringify(minimal, null, 2)}`);
      expect(loadAuthConfig(file, env).config.providers.has('corp')).to.equal(true);
      expect(
        loadAuthConfig(undefined, {
          ...env,
          GATEHOUSE_AUTH_CONFIG_JSON: `\ufeff${JSON.stringify(minimal)}`,
        }).config.providers.has('corp'),
      ).to.equal(true);
    });

    it('JSON errors say the line and column on every Node version, and never quote the text', () => {
      const problem = (text: string) => {
        try {
          loadAuthConfig(undefined, { GATEHOUSE_AUTH_CONFIG_JSON: text });
        } catch (error) {
          return (error as AuthConfigError).problems.join();
        }
        throw new Error('no error');
      };
      expect(problem('{\n  "platform": {"enabled": true}\n  "x": "super-secret-value"\n}')).to.match(
        /^GATEHOUSE_AUTH_CONFIG_JSON: not valid JSON \(.* at position 36 \(line 3 column 3\)\)$/,
      );
      expect(problem('{"a": 1,\r\n\r\n}')).to.match(/\(line 3 column 1\)\)$/);
      expect(problem('\ufeff{"a":\n\n "x\ny"}')).to.match(/\(line 3 column 4\)\)$/);
      const quoted = problem('super-secret-value');
      expect(quoted).to.match(/^GATEHOUSE_AUTH_CONFIG_JSON: not valid JSON/);
      expect(quoted).not.to.contain('super-secret');
      for (const empty of [' ', '\n\t\r\n', '\ufeff'])
        expect(problem(empty)).to.equal('GATEHOUSE_AUTH_CONFIG_JSON: empty: expected a JSON object');
    });

    it('a source that is set but not read is named: a warning when the configuration starts, beside the problems when it does not', () => {
      const json = JSON.stringify(minimal);
      const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-config-')), 'auth.json');
      writeFileSync(file, json);
      expect(
        loadAuthConfig(undefined, { ...env, GATEHOUSE_AUTH_CONFIG_JSON: json, WEBSITE_AUTH_V2_CONFIG_JSON: json })
          .warnings,
      ).to.deep.equal([
        'WEBSITE_AUTH_V2_CONFIG_JSON is set too, and ignored: the configuration is read from GATEHOUSE_AUTH_CONFIG_JSON',
      ]);
      expect(
        loadAuthConfig(file, { ...env, GATEHOUSE_AUTH_CONFIG_JSON: json, WEBSITE_AUTH_V2_CONFIG_JSON: '' }).warnings,
      ).to.deep.equal([`GATEHOUSE_AUTH_CONFIG_JSON is set too, and ignored: the configuration is read from ${file}`]);
      expect(loadAuthConfig(file, env).warnings).to.deep.equal([]);
      writeFileSync(file, '{}');
      const both = { GATEHOUSE_AUTH_CONFIG_JSON: json, WEBSITE_AUTH_V2_CONFIG_JSON: json };
      expect(() => loadAuthConfig(file, { ...env, ...both })).to.throw(
        AuthConfigError,
        `invalid authentication configuration from ${file} (GATEHOUSE_AUTH_CONFIG_JSON and WEBSITE_AUTH_V2_CONFIG_JSON are set too, and ignored):\n  - identityProviders:`,
      );
      expect(() => loadAuthConfig(undefined, { ...env, GATEHOUSE_AUTH_CONFIG_JSON: '{}' })).to.throw(
        AuthConfigError,
        'invalid authentication configuration from GATEHOUSE_AUTH_CONFIG_JSON:\n',
      );
    });

    it('clear errors for a missing file, bad JSON, or no configuration at all', () => {
      expect(() => loadAuthConfig('/nonexistent/auth.json', env)).to.throw(
        AuthConfigError,
        /\/nonexistent\/auth\.json: cannot read \(ENOENT\)/,
      );
      expect(() => loadAuthConfig(undefined, { GATEHOUSE_AUTH_CONFIG_JSON: '{"a":' })).to.throw(
        AuthConfigError,
        /GATEHOUSE_AUTH_CONFIG_JSON: not valid JSON/,
      );
      expect(() => loadAuthConfig(undefined, {})).to.throw(
        AuthConfigError,
        /no configuration: pass --config <file> or set GATEHOUSE_AUTH_CONFIG_JSON or WEBSITE_AUTH_V2_CONFIG_JSON/,
      );
    });
  });
});
