// The signed-in session the benchmarks measure: a real record in the encrypted
// token store, with realistic token sizes (about 1.7 KB, exposed as headers),
// and the signed cookie that names it.
import type { AuthConfig } from '../../src/core/config/auth-config.js';
import { deriveKey } from '../../src/core/crypto/keys.js';
import { newSessionId, signSessionId } from '../../src/core/crypto/session-id.js';
import type { SessionRecord } from '../../src/core/session/record.js';
import type { TokenStore } from '../../src/core/token-store/token-store.js';

const DAY_MS = 24 * 3_600_000;

export async function storeBenchSession(
  config: AuthConfig,
  store: TokenStore<SessionRecord>,
  masterKey: Buffer,
  host: string,
): Promise<{ record: SessionRecord; cookie: string }> {
  const now = Date.now();
  const record: SessionRecord = {
    app: config.app,
    provider: 'bench',
    userId: 'user-1',
    userName: 'Bench User',
    nameType: 'name',
    roleType: 'roles',
    claims: [
      { typ: 'sub', val: 'user-1' },
      { typ: 'name', val: 'Bench User' },
      { typ: 'email', val: 'bench@example.com' },
    ],
    tokens: {
      accessToken: 'a'.repeat(800),
      idToken: 'i'.repeat(900),
      refreshToken: 'r'.repeat(40),
      accessTokenExpiresAt: now + DAY_MS,
    },
    createdAt: now,
    expiresAt: now + DAY_MS,
    configFingerprint: config.providers.get('bench')!.fingerprint,
    host,
  };
  const id = newSessionId();
  await store.put(id, record, record.expiresAt);
  return {
    record,
    cookie: `${config.sessionCookieName}=${signSessionId(deriveKey(masterKey, 'session-cookie', config.app), id)}`,
  };
}
