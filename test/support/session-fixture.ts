// One OpenID provider ("corp") configured, and a session record made under it: for tests of the
// session layer itself, without a provider or HTTP.
import { resolveAuthConfig } from '../../src/core/config/auth-config.js';
import type { SessionRecord } from '../../src/core/session/record.js';

export const corpDocument = {
  identityProviders: {
    customOpenIdConnectProviders: {
      corp: {
        registration: {
          clientId: 'c',
          openIdConnectConfiguration: {
            wellKnownOpenIdConfiguration: 'https://idp.example/.well-known/openid-configuration',
          },
        },
      },
    },
  },
};
export const corpConfig = resolveAuthConfig(corpDocument, {}).config;

/** A session of user `u` at `corp`, signed in at `now` for an hour; `changes` replace fields. */
export function corpSession(now: number, changes: Partial<SessionRecord> = {}): SessionRecord {
  return {
    app: corpConfig.app,
    provider: 'corp',
    userId: 'u',
    userName: 'n',
    nameType: 'name',
    roleType: 'roles',
    claims: [],
    tokens: {},
    createdAt: now,
    expiresAt: now + 3_600_000,
    configFingerprint: 'fp',
    host: 'app.example',
    ...changes,
  };
}
