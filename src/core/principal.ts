// From validated ID-token claims to the principal the app sees.
import type { Claim, Identity } from './identity.js';
import type { SessionRecord } from './session/record.js';

/** Protocol plumbing, not facts about the user. */
const PROTOCOL_CLAIMS = new Set(['nonce', 'at_hash', 'c_hash', 's_hash', 'sid']);

/** Claims as `{typ, val}` pairs: every value a string, multi-valued claims repeated. */
export function claimList(claims: Readonly<Record<string, unknown>>): Claim[] {
  const list: Claim[] = [];
  for (const typ of Object.keys(claims)) {
    if (PROTOCOL_CLAIMS.has(typ)) continue;
    const value = claims[typ];
    if (Array.isArray(value)) for (const item of value) pushClaim(list, typ, item);
    else pushClaim(list, typ, value);
  }
  return list;
}

function pushClaim(list: Claim[], typ: string, value: unknown): void {
  if (value === undefined || value === null) return;
  list.push({
    typ,
    val: typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value),
  });
}

/** The -NAME value: the configured claim, else preferred_username, name, email, then the subject. */
export function userNameFrom(
  claims: Readonly<Record<string, unknown>>,
  nameClaimType: string | undefined,
): { name: string; type: string } {
  for (const type of [nameClaimType, 'preferred_username', 'name', 'email']) {
    if (type === undefined) continue;
    const value = claims[type];
    if (typeof value === 'string' && value !== '') return { name: value, type };
  }
  return { name: typeof claims.sub === 'string' ? claims.sub : '', type: nameClaimType ?? 'name' };
}

/** The identity headers' source for a stored session; tokens only when the token store is on. */
export function identityFromRecord(record: SessionRecord, exposeTokens: boolean): Identity {
  const { tokens } = record;
  return {
    provider: record.provider,
    userId: record.userId,
    userName: record.userName,
    authType: record.provider,
    nameType: record.nameType,
    roleType: record.roleType,
    claims: record.claims,
    ...(exposeTokens
      ? {
          tokens: {
            ...(tokens.accessToken !== undefined ? { accessToken: tokens.accessToken } : {}),
            ...(tokens.idToken !== undefined ? { idToken: tokens.idToken } : {}),
            ...(tokens.accessTokenExpiresAt !== undefined
              ? { expiresOn: new Date(tokens.accessTokenExpiresAt).toISOString() }
              : {}),
            ...(tokens.refreshToken !== undefined ? { refreshToken: tokens.refreshToken } : {}),
            ...(tokens.accessTokenSecret !== undefined ? { accessTokenSecret: tokens.accessTokenSecret } : {}),
          },
        }
      : {}),
  };
}
