// Property tests for the configuration: a document that is a valid one with a few parts made
// hostile (any JSON value in place of a setting, keys removed or added, numbers and time spans at
// the edges) is either refused with a list of problems that each name where, or resolved into a
// configuration the core can run on: every duration a date can be counted in. Never a crash, and
// never a secret in what is said about it.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';
import fc from 'fast-check';

import { startAuthRuntime } from '../../../src/core/auth-runtime.js';
import { AuthConfigError, resolveAuthConfig, type AuthConfig } from '../../../src/core/config/auth-config.js';
import { fallbackCore } from '../../../src/native/index.js';
import { capturingLogger } from '../../support/logs.js';

const SECRET = 'Secret-Marker-7f3a9c';
const ENV = {
  S_AAD: SECRET,
  S_GOOGLE: SECRET,
  S_FACEBOOK: SECRET,
  S_GITHUB: SECRET,
  S_TWITTER: SECRET,
  S_CUSTOM: SECRET,
};

/** A document that resolves: every provider kind, every section set. */
function validDocument(): Record<string, unknown> {
  return {
    platform: { enabled: true },
    globalValidation: {
      requireAuthentication: true,
      unauthenticatedClientAction: 'RedirectToLoginPage',
      redirectToProvider: 'corp',
      excludedPaths: ['/public/*', '/health'],
    },
    httpSettings: { requireHttps: false, routes: { apiPrefix: '/.auth' }, forwardProxy: { convention: 'NoProxy' } },
    login: {
      tokenStore: { enabled: true, tokenRefreshExtensionHours: 72 },
      allowedExternalRedirectUrls: ['https://allowed.example'],
      cookieExpiration: { convention: 'FixedTime', timeToExpiration: '08:00:00' },
      nonce: { validateNonce: true, nonceExpirationInterval: '00:05:00' },
      preserveUrlFragmentsForLogins: false,
    },
    identityProviders: {
      azureActiveDirectory: {
        registration: {
          openIdIssuer: 'https://login.microsoftonline.com/common/v2.0',
          clientId: 'aad-app',
          clientSecretSettingName: 'S_AAD',
        },
      },
      google: { registration: { clientId: 'google-app', clientSecretSettingName: 'S_GOOGLE' } },
      facebook: { registration: { appId: 'fb-app', appSecretSettingName: 'S_FACEBOOK' }, graphApiVersion: 'v19.0' },
      gitHub: { registration: { clientId: 'gh-app', clientSecretSettingName: 'S_GITHUB' } },
      twitter: { registration: { consumerKey: 'tw-key', consumerSecretSettingName: 'S_TWITTER' } },
      customOpenIdConnectProviders: {
        corp: {
          registration: {
            clientId: 'corp-app',
            clientCredential: { clientSecretSettingName: 'S_CUSTOM' },
            openIdConnectConfiguration: {
              wellKnownOpenIdConfiguration: 'https://idp.example/.well-known/openid-configuration',
            },
          },
          login: { nameClaimType: 'name', scopes: ['openid', 'profile'], loginParameters: ['prompt=login'] },
        },
      },
    },
    gatehouse: {
      app: 'shop',
      headerPrefix: 'X-PLATFORM-',
      sessionCookieName: 'PlatformAuthSession',
      refreshWindowSeconds: 300,
    },
  };
}

/** Every path to a value in `document` (objects and arrays included), as key lists. */
function pathsOf(value: unknown, at: string[] = []): string[][] {
  const paths = [at];
  if (value !== null && typeof value === 'object')
    for (const key of Object.keys(value)) paths.push(...pathsOf((value as Record<string, unknown>)[key], [...at, key]));
  return paths;
}

// Values at the edges of what the settings take, the secret's own value among them (a document
// that names a secret where a setting name belongs must not have it repeated back).
const edgeValue = fc.constantFrom<unknown>(
  0,
  -1,
  1e308,
  -1e308,
  2 ** 53,
  0.5,
  1e-300,
  '',
  ' ',
  'true',
  '0',
  '-1',
  '1e308',
  '00:00:00',
  '99:99:99',
  '24:00:00',
  '999999999999999999999.00:00:00',
  '99999999.00:00:00',
  '3650.00:00:00',
  '3651.00:00:00',
  '1.00:00:00.5',
  '/*',
  '*',
  '/a/*/b',
  '//',
  '/.auth',
  '/.auth/',
  'http://',
  'https://evil.example@',
  'javascript:alert(1)',
  '__proto__',
  'constructor',
  'x'.repeat(5000),
  '\u0000',
  '\r\nX-Injected: 1',
  'é',
  SECRET,
  null,
  true,
  false,
  [],
  {},
  [null],
  { enabled: 'yes' },
);
const hostileValue = fc.oneof(
  { arbitrary: edgeValue, weight: 3 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
);
const hostileKey = fc.constantFrom(
  '__proto__',
  'constructor',
  'toString',
  'enabled',
  'registration',
  'Enabled',
  'unknownSetting',
  '',
  ' ',
  'corp',
  'dev',
  'done',
);

type Mutation =
  | { kind: 'set'; at: number; value: unknown }
  | { kind: 'delete'; at: number }
  | { kind: 'add'; at: number; key: string; value: unknown };
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: hostileValue }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({ kind: fc.constant('add' as const), at: fc.nat(), key: hostileKey, value: hostileValue }),
    weight: 1,
  },
);

/** The valid document with the mutations made; keys are defined as JSON.parse defines them (`__proto__` an own key). */
function mutated(mutations: readonly Mutation[]): unknown {
  const document = validDocument();
  for (const change of mutations) {
    const paths = pathsOf(document).slice(1);
    const where = paths[change.at % paths.length]!;
    const parent = where
      .slice(0, -1)
      .reduce<Record<string, unknown>>((node, key) => node[key] as Record<string, unknown>, document);
    const key = where.at(-1)!;
    // A copy: generated values are shared between runs, and a later change may add keys to this one.
    const value = structuredClone('value' in change ? change.value : undefined);
    if (change.kind === 'set')
      Object.defineProperty(parent, key, { value, enumerable: true, writable: true, configurable: true });
    else if (change.kind === 'delete') {
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
    } else {
      const target = parent[key];
      if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
        Object.defineProperty(target, change.key, { value, enumerable: true, writable: true, configurable: true });
      }
    }
  }
  // As the document reaches gatehouse: through JSON text.
  return JSON.parse(JSON.stringify(document));
}

// A path: plain keys joined by dots, any other key as a JSON string in brackets (json-path.ts).
const PLAIN = String.raw`[A-Za-z0-9_$-]+`;
const QUOTED = String.raw`\["(?:[^"\\\u0000-\u001f]|\\.)*"\]`;
const PROBLEM = new RegExp(String.raw`^(\(document\)|(${PLAIN}|${QUOTED})(\.${PLAIN}|${QUOTED})*): [^\u0000-\u001f]+$`);

/**
 * Whether the document itself holds the secret's text somewhere other than a `*SettingName`
 * (a value gatehouse may quote back, as it quotes a malformed excluded path). In a setting name
 * it is a secret pasted where its variable's name belongs, and must not be repeated.
 */
function holdsSecretOutsideSettingNames(value: unknown, key = ''): boolean {
  if (typeof value === 'string') return value.includes(SECRET) && !key.endsWith('SettingName');
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([childKey, child]) =>
    holdsSecretOutsideSettingNames(child, Array.isArray(value) ? key : childKey),
  );
}

const TEN_YEARS_MS = 3650 * 24 * 3600_000;

/** The durations of a resolved configuration, each a whole number of milliseconds a date can be counted in. */
function expectCountableDurations(config: AuthConfig): void {
  const durations = {
    'cookieExpiration.lifetimeMs': config.cookieExpiration.lifetimeMs,
    'nonce.lifetimeMs': config.nonce.lifetimeMs,
    'tokenStore.refreshExtensionMs': config.tokenStore.refreshExtensionMs,
    refreshWindowMs: config.refreshWindowMs,
  };
  for (const [name, ms] of Object.entries(durations)) {
    expect(Number.isFinite(ms) && ms >= 0 && ms <= TEN_YEARS_MS, `${name} = ${ms}`).to.equal(true);
    expect(Number.isNaN(new Date(Date.now() + ms).getTime()), name).to.equal(false);
  }
}

describe('configuration documents (property tests)', () => {
  it('the unmutated document resolves (so that the mutations test something)', () => {
    const { config } = resolveAuthConfig(validDocument(), ENV);
    expect([...config.providers.keys()].sort()).to.deep.equal([
      'aad',
      'corp',
      'facebook',
      'github',
      'google',
      'twitter',
    ]);
    expectCountableDurations(config);
  });

  it('a valid document made partly hostile is refused with problems that say where, or resolves to durations a date can hold; never a crash, never a secret repeated', () => {
    let refused = 0;
    let resolved = 0;
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 4 }), (mutations) => {
        const document = mutated(mutations);
        let outcome: ReturnType<typeof resolveAuthConfig>;
        try {
          outcome = resolveAuthConfig(document, ENV);
        } catch (error) {
          if (!(error instanceof AuthConfigError)) throw error;
          refused++;
          expect(error.problems.length).to.be.greaterThan(0);
          // Each problem starts with the JSON path it is about (or "(document)"), then says what was expected.
          for (const problem of error.problems) expect(problem).to.match(PROBLEM);
          if (!holdsSecretOutsideSettingNames(document)) expect(error.message).to.not.include(SECRET);
          return;
        }
        resolved++;
        if (!holdsSecretOutsideSettingNames(document)) expect(outcome.warnings.join('\n')).to.not.include(SECRET);
        expectCountableDurations(outcome.config);
      }),
      { numRuns: 1500 },
    );
    // Both outcomes happen often: the property is tested on each.
    expect(refused).to.be.greaterThan(150);
    expect(resolved).to.be.greaterThan(150);
  });

  it('a document that resolves starts the auth core, which answers anonymous requests without a 500', async () => {
    let started = 0;
    const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-config-properties-'));
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(mutation, { minLength: 1, maxLength: 3 }),
          fc.constantFrom('/', '/public/a', '/.auth/me', '/.auth/version', '/.auth/login/done', '/.auth/logout'),
          async (mutations, requestPath) => {
            let config: AuthConfig;
            try {
              ({ config } = resolveAuthConfig(mutated(mutations), ENV));
            } catch (error) {
              if (error instanceof AuthConfigError) return;
              throw error;
            }
            started++;
            const logs = capturingLogger('debug');
            const runtime = await startAuthRuntime({
              headers: fallbackCore,
              config: { ...config, tokenStore: { ...config.tokenStore, directory } },
              logger: logs.logger,
              masterKey: Buffer.alloc(32, 1),
            });
            try {
              const decision = await runtime.layer.decide({
                method: 'GET',
                path: requestPath,
                query: '',
                headers: [['accept', 'text/html']],
                scheme: 'https',
                host: 'app.example',
                remoteAddress: '127.0.0.1',
                readBody: async () => Buffer.alloc(0),
              });
              if (decision.kind === 'respond')
                expect(decision.status, `${requestPath}: ${decision.body?.toString()}`).to.be.below(500);
              expect(logs.raw()).to.not.include(SECRET);
            } finally {
              runtime.close();
            }
          },
        ),
        { numRuns: 150 },
      );
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
    expect(started).to.be.greaterThan(15);
  });
});
