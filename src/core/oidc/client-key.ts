// A client's own key for private_key_jwt (RFC 7523): the private key gatehouse
// signs its client assertions with (openid-client signs them), and what the
// provider must be given to check them: the public key as a JWKS document, and
// with a certificate its thumbprint (what Microsoft's directory registers).
// See docs/configuration.md#client-authentication-by-key.
import { createHash, createPrivateKey, createPublicKey, webcrypto, X509Certificate, type KeyObject } from 'node:crypto';

import { calculateJwkThumbprint, type JWK } from 'jose';

export type ClientKeyAlgorithm = 'RS256' | 'ES256' | 'PS256';
export const CLIENT_KEY_ALGORITHMS: readonly ClientKeyAlgorithm[] = ['RS256', 'ES256', 'PS256'];

/** The key as configured: PEM text (read from its setting or file), never logged. */
export interface ClientKeySettings {
  readonly privateKeyPem: string;
  readonly certificatePem?: string;
  readonly algorithm?: ClientKeyAlgorithm;
  readonly keyId?: string;
}

/** Why a configured key cannot be used; the message never holds the key. */
export class ClientKeyError extends Error {}

const WEB_CRYPTO_ALGORITHM: Readonly<
  Record<ClientKeyAlgorithm, webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams>
> = {
  RS256: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  PS256: { name: 'RSA-PSS', hash: 'SHA-256' },
  ES256: { name: 'ECDSA', namedCurve: 'P-256' },
};

/** The algorithm a key is used with: the configured one if the key fits it, else RS256 for RSA and ES256 for P-256. */
function algorithmFor(key: KeyObject, configured: ClientKeyAlgorithm | undefined): ClientKeyAlgorithm {
  const type = key.asymmetricKeyType;
  if (type === 'rsa') {
    if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048)
      throw new ClientKeyError('an RSA key must have at least 2048 bits');
    if (configured === 'ES256') throw new ClientKeyError('ES256 needs a P-256 key, and this is an RSA key');
    return configured ?? 'RS256';
  }
  if (type === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') {
    if (configured !== undefined && configured !== 'ES256')
      throw new ClientKeyError(`${configured} needs an RSA key, and this is a P-256 key`);
    return 'ES256';
  }
  throw new ClientKeyError(`expected an RSA or P-256 private key, not ${type ?? 'a secret key'}`);
}

/** The key and certificate, read and checked (synchronously: the configuration is checked so). Throws ClientKeyError. */
export function inspectClientKey(settings: ClientKeySettings): {
  readonly key: KeyObject;
  readonly algorithm: ClientKeyAlgorithm;
  readonly certificate: X509Certificate | undefined;
} {
  let key: KeyObject;
  try {
    key = createPrivateKey(settings.privateKeyPem);
  } catch {
    throw new ClientKeyError('the private key is not a PEM private key (PKCS#8, PKCS#1 or SEC1)');
  }
  const algorithm = algorithmFor(key, settings.algorithm);
  if (settings.certificatePem === undefined) return { key, algorithm, certificate: undefined };
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(settings.certificatePem);
  } catch {
    throw new ClientKeyError('the certificate is not a PEM X.509 certificate');
  }
  if (!certificate.checkPrivateKey(key))
    throw new ClientKeyError("the certificate is not the private key's (its public key differs)");
  return { key, algorithm, certificate };
}

/** A certificate's SHA-1 thumbprint, upper-case hex, as Microsoft's directory and Easy Auth show it. */
export function certificateThumbprint(certificate: X509Certificate): string {
  return certificate.fingerprint.replaceAll(':', '').toUpperCase();
}

export class ClientKey {
  private constructor(
    /** What openid-client's PrivateKeyJwt signs with. */
    readonly privateKey: { readonly key: webcrypto.CryptoKey; readonly kid: string },
    readonly algorithm: ClientKeyAlgorithm,
    /** The public key as the provider registers it (kid, alg, use; x5c with a certificate). */
    readonly publicJwk: JWK,
    /** With a certificate: its SHA-1 thumbprint, upper-case hex (as Microsoft's directory and Easy Auth show it). */
    readonly certificateThumbprint: string | undefined,
    /** JWS header parameters naming the certificate (x5t, x5t#S256), which Microsoft's directory requires. */
    readonly certificateHeader: Readonly<Record<string, string>>,
  ) {}

  /** Reads and checks the key (and certificate). Throws ClientKeyError. */
  static async load(settings: ClientKeySettings): Promise<ClientKey> {
    const { key, algorithm, certificate } = inspectClientKey(settings);
    const publicJwk = createPublicKey(key).export({ format: 'jwk' }) as JWK;
    const certificateHeader: Record<string, string> =
      certificate === undefined
        ? {}
        : {
            x5t: createHash('sha1').update(certificate.raw).digest('base64url'),
            'x5t#S256': createHash('sha256').update(certificate.raw).digest('base64url'),
          };
    const chain = certificate === undefined ? undefined : [certificate.raw.toString('base64')];
    const kid = settings.keyId ?? (await calculateJwkThumbprint(publicJwk, 'sha256'));
    const der = key.export({ type: 'pkcs8', format: 'der' });
    const cryptoKey = await webcrypto.subtle.importKey('pkcs8', der, WEB_CRYPTO_ALGORITHM[algorithm], false, ['sign']);
    return new ClientKey(
      { key: cryptoKey, kid },
      algorithm,
      { ...publicJwk, kid, alg: algorithm, use: 'sig', ...(chain ? { x5c: chain, ...certificateHeader } : {}) },
      certificate === undefined ? undefined : certificateThumbprint(certificate),
      certificateHeader,
    );
  }

  /** The JWKS document the provider registers (its `jwks`, or a `jwks_uri` serving this). */
  get jwks(): { readonly keys: readonly JWK[] } {
    return { keys: [this.publicJwk] };
  }
}
