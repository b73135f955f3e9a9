// The keys of a provider's client key (private_key_jwt), as the document
// writes them, and read into ClientKeySettings: PEM text from an environment
// setting or a file, never inline. See docs/configuration.md#client-authentication-by-key.
import { readFileSync } from 'node:fs';

import { z } from 'zod';

import {
  CLIENT_KEY_ALGORITHMS,
  certificateThumbprint,
  ClientKeyError,
  inspectClientKey,
  type ClientKeySettings,
} from '../oidc/client-key.js';

/** The name of the environment variable a secret is read from: no `=` or control character can be part of one. */
const settingName = z.string().regex(/^[^=\u0000-\u001f\u007f]+$/, 'expected an environment variable name');

/** Beside clientSecretSettingName in `registration.clientCredential`. */
export const clientKeyFields = {
  /** Environment variable holding the private key (PEM). */
  privateKeySettingName: settingName.optional(),
  /** Or a file holding it (PEM). */
  privateKeyFile: z.string().min(1).optional(),
  /** The key's X.509 certificate (PEM), for providers that register certificates (Microsoft's directory). */
  certificateSettingName: settingName.optional(),
  certificateFile: z.string().min(1).optional(),
  signingAlgorithm: z.enum(CLIENT_KEY_ALGORITHMS as [string, ...string[]]).optional(),
  /** The `kid` the provider knows the key by (default: its JWK thumbprint). */
  keyId: z.string().min(1).optional(),
};

type ClientKeyFields = { [K in keyof typeof clientKeyFields]?: z.infer<(typeof clientKeyFields)[K]> };

/**
 * The client key a credential block configures, or undefined when it names none. `readSetting`
 * reads an environment setting (a problem when it is unset); a file that cannot be read is a
 * problem naming the file. `path`: the block's JSON path.
 */
export function clientKeySettings(
  path: string,
  credential: ClientKeyFields | undefined,
  readSetting: (path: string, name: string) => string,
  problems: string[],
  /** Whether a client secret is configured too (one or the other); Easy Auth's certificate thumbprint, if given. */
  also: { readonly secret: boolean; readonly thumbprint?: { readonly path: string; readonly value: string } },
): ClientKeySettings | undefined {
  if (credential === undefined) {
    if (also.thumbprint !== undefined)
      problems.push(`${also.thumbprint.path}: needs the certificate and its private key (clientCredential)`);
    return undefined;
  }
  const pem = (settingKey: string, name: string | undefined, fileKey: string, file: string | undefined) => {
    if (name !== undefined && file !== undefined) {
      problems.push(`${path}: ${settingKey} and ${fileKey} both given; give one`);
      return undefined;
    }
    if (name !== undefined) return readSetting(`${path}.${settingKey}`, name);
    if (file === undefined) return undefined;
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      problems.push(`${path}.${fileKey}: ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
      return '';
    }
  };
  const privateKeyPem = pem(
    'privateKeySettingName',
    credential.privateKeySettingName,
    'privateKeyFile',
    credential.privateKeyFile,
  );
  const certificatePem = pem(
    'certificateSettingName',
    credential.certificateSettingName,
    'certificateFile',
    credential.certificateFile,
  );
  if (privateKeyPem === undefined) {
    if (also.thumbprint !== undefined)
      problems.push(`${also.thumbprint.path}: needs the certificate and its private key (clientCredential)`);
    if (certificatePem !== undefined || credential.signingAlgorithm !== undefined || credential.keyId !== undefined)
      problems.push(
        `${path}: a certificate, signingAlgorithm or keyId needs the private key (privateKeySettingName or privateKeyFile)`,
      );
    return undefined;
  }
  const settings: ClientKeySettings = {
    privateKeyPem,
    ...(certificatePem !== undefined ? { certificatePem } : {}),
    ...(credential.signingAlgorithm !== undefined
      ? { algorithm: credential.signingAlgorithm as NonNullable<ClientKeySettings['algorithm']> }
      : {}),
    ...(credential.keyId !== undefined ? { keyId: credential.keyId } : {}),
  };
  if (also.secret) problems.push(`${path}: a client secret and a private key both given; give one`);
  if (privateKeyPem === '' || certificatePem === '') return undefined; // unset or unreadable: said already
  try {
    const { certificate } = inspectClientKey(settings);
    if (also.thumbprint !== undefined) {
      if (certificate === undefined)
        problems.push(`${also.thumbprint.path}: needs the certificate (certificateSettingName or certificateFile)`);
      else if (certificateThumbprint(certificate) !== also.thumbprint.value.toUpperCase())
        problems.push(
          `${also.thumbprint.path}: is not the thumbprint of the certificate given (${certificateThumbprint(certificate)})`,
        );
    }
  } catch (error) {
    if (!(error instanceof ClientKeyError)) throw error;
    problems.push(`${path}: ${error.message}`);
    return undefined;
  }
  return settings;
}
