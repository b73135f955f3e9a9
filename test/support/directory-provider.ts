// An enterprise directory (Microsoft Entra ID's shape) for tests: the
// development OpenID provider under one tenant's issuer path (`/<tenant>/v2.0`)
// with the app registration `aad-app`, whose redirect URI is gatehouse's `aad`
// callback. Multi-tenant, it also serves the tenant-independent discovery
// document (`/common/v2.0`), which publishes the template issuer
// `.../{tenantid}/v2.0` as the directory's does (docs/configuration.md).
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import {
  startDevIdentityProvider,
  type DevClient,
  type DevIdentityProviderOptions,
  type DevUser,
  type RunningIdentityProvider,
} from '../../src/dev/identity-provider.js';

/** The directory's one tenant: its users' `tid`, its issuer's path. */
export const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
export const DIRECTORY_CLIENT_ID = 'aad-app';
/** The setting that holds the client secret in `Directory.env`. */
const SECRET_SETTING = 'AAD_SECRET';
const TEMPLATE_DOCUMENT = '/common/v2.0/.well-known/openid-configuration';

export interface DirectoryOptions {
  /** gatehouse's origin: the registration's redirect URI is its `/.auth/login/aad/callback`. */
  readonly front: string;
  /** gatehouse registered with the template issuer of `/common/v2.0` rather than the tenant's. */
  readonly multiTenant?: boolean;
  /** The provider's accounts; without them its demonstration users. */
  readonly users?: DevIdentityProviderOptions['users'];
  /** Which claims each scope gives; without them the directory's ids and preferred_username. */
  readonly claims?: DevIdentityProviderOptions['claims'];
  /** Fields of the app registration beyond its id, secret and redirect URI (client authentication, metadata). */
  readonly client?: Pick<DevClient, 'tokenEndpointAuthMethod' | 'metadata'>;
  /** Answers a request itself when it returns true; asked after the template document. */
  readonly intercept?: DevIdentityProviderOptions['intercept'];
  readonly middleware?: DevIdentityProviderOptions['middleware'];
}

export interface Directory {
  readonly idp: RunningIdentityProvider;
  readonly clientSecret: string;
  /** The settings gatehouse reads the client secret from. */
  readonly env: Record<string, string>;
  /**
   * The authsettings `identityProviders` naming this directory: its registration (the template or tenant
   * issuer, `aad-app`, the secret's setting in `env`) and beside it `settings` (login, validation).
   */
  identityProviders(settings?: Record<string, unknown>): { azureActiveDirectory: Record<string, unknown> };
}

/** An account of the directory's tenant: its object id `oid`, its `tid`, and `claims`. */
export function member(password: string, oid: string, claims: Record<string, unknown> = {}): DevUser {
  return { password, claims: { oid, tid: TENANT, ...claims } };
}

/** The tenant-independent discovery document: the tenant's, with the tenant in its issuer a template. */
function templateDocument(req: IncomingMessage, res: ServerResponse, issuer: string): boolean {
  if (req.url !== TEMPLATE_DOCUMENT) return false;
  void fetch(`${issuer}/.well-known/openid-configuration`)
    .then((r) => r.json() as Promise<Record<string, unknown>>)
    .then((metadata) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ...metadata, issuer: issuer.replace(TENANT, '{tenantid}') })),
    );
  return true;
}

export async function startDirectory(options: DirectoryOptions): Promise<Directory> {
  const clientSecret = randomBytes(12).toString('hex');
  const own = options.intercept;
  const idp = await startDevIdentityProvider({
    issuerPath: `/${TENANT}/v2.0`,
    clients: [
      {
        clientId: DIRECTORY_CLIENT_ID,
        clientSecret,
        redirectUris: [`${options.front}/.auth/login/aad/callback`],
        postLogoutRedirectUris: [],
        ...options.client,
      },
    ],
    ...(options.users ? { users: options.users } : {}),
    claims: options.claims ?? { openid: ['sub', 'oid', 'tid'], profile: ['preferred_username'] },
    ...(options.middleware ? { middleware: options.middleware } : {}),
    intercept: (req, res, issuer) =>
      (options.multiTenant === true && templateDocument(req, res, issuer)) || (own?.(req, res, issuer) ?? false),
  });
  const openIdIssuer = options.multiTenant ? `${new URL(idp.issuer).origin}/common/v2.0` : idp.issuer;
  const registration = { openIdIssuer, clientId: DIRECTORY_CLIENT_ID, clientSecretSettingName: SECRET_SETTING };
  return {
    idp,
    clientSecret,
    env: { [SECRET_SETTING]: clientSecret },
    identityProviders: (settings = {}) => ({ azureActiveDirectory: { registration, ...settings } }),
  };
}
