// An OpenID issuer whose keys the test holds, so it can mint any token a real
// provider could (and every forgery an attacker would try). It serves what a
// relying party reads over HTTP: discovery per issuer path, and the JWKS.
// Issuer paths `/common/v2.0` and `/organizations/v2.0` answer with the
// multi-tenant template issuer `.../{tenantid}/v2.0`, as the directory does.
import { randomBytes, type KeyObject } from 'node:crypto';

import { exportJWK, SignJWT, type JWTPayload } from 'jose';

import { generateRsaKeyPair } from '../../src/dev/rsa-key-pair.js';
import { sendJson, startStandIn, type StandIn } from './http-kit.js';

interface SigningKey {
  readonly kid: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

export interface TokenIssuer extends StandIn {
  /** The issuer identifier for an issuer path, such as `/corp` or `/tenant-1/v2.0`. */
  issuer(path: string): string;
  /** A token signed with the current key (or `key`), header fields added as given. */
  mint(
    claims: JWTPayload,
    options?: { kid?: string | null; key?: KeyObject; header?: Record<string, unknown> },
  ): Promise<string>;
  /** Adds a new current key (the old one stays published). */
  rotate(): SigningKey;
  readonly keys: SigningKey[];
  jwksFetches: number;
}

function newKey(): SigningKey {
  // Exported as JWK on every key-set fetch: generateKeyPairSync's own key objects could hang Node 20 there.
  const { privateKey, publicKey } = generateRsaKeyPair();
  return { kid: randomBytes(6).toString('hex'), privateKey, publicKey };
}

const MULTI_TENANT = /^\/(common|organizations|consumers)\/v2\.0$/;

export async function startTokenIssuer(): Promise<TokenIssuer> {
  const keys: SigningKey[] = [newKey()];
  let base = '';
  const issuer: TokenIssuer = Object.assign(
    await startStandIn(async (_req, res, url) => {
      if (url.pathname === '/keys') {
        issuer.jwksFetches++;
        const published = await Promise.all(
          keys.map(async (k) => ({ ...(await exportJWK(k.publicKey)), kid: k.kid, use: 'sig', alg: 'RS256' })),
        );
        return sendJson(res, 200, { keys: published });
      }
      const suffix = '/.well-known/openid-configuration';
      if (url.pathname.endsWith(suffix)) {
        const path = url.pathname.slice(0, -suffix.length);
        const id = MULTI_TENANT.test(path) ? `${base}/{tenantid}/v2.0` : `${base}${path}`;
        return sendJson(res, 200, {
          issuer: id,
          authorization_endpoint: `${base}${path}/authorize`,
          token_endpoint: `${base}${path}/token`,
          jwks_uri: `${base}/keys`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
        });
      }
      sendJson(res, 404, { error: 'not_found' });
    }),
    {
      keys,
      jwksFetches: 0,
      issuer: (path: string) => `${base}${path}`,
      rotate: () => {
        const key = newKey();
        keys.push(key);
        return key;
      },
      mint: async (
        claims: JWTPayload,
        options: { kid?: string | null; key?: KeyObject; header?: Record<string, unknown> } = {},
      ) => {
        const current = keys.at(-1)!;
        const kid = options.kid === undefined ? current.kid : options.kid;
        const now = Math.floor(Date.now() / 1000);
        return new SignJWT({ iat: now, exp: now + 3600, ...claims })
          .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(kid !== null ? { kid } : {}), ...options.header })
          .sign(options.key ?? current.privateKey);
      },
    },
  );
  base = issuer.url;
  return issuer;
}
