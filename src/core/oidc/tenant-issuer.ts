// Multi-tenant directories (Microsoft's `common`, `organizations` and
// `consumers`) publish a templated issuer, `https://login.microsoftonline.com/{tenantid}/v2.0`:
// each token's issuer is the template filled with the token's own tenant
// (its `tid` claim), and the tenants a configuration allows bound which.
import type { JWTPayload } from 'jose';

import { ProviderUnavailableError } from '../providers/errors.js';

const TENANT_PLACEHOLDER = '{tenantid}';
/** A tenant id as it may appear in an issuer path segment. */
const TENANT_ID = /^[A-Za-z0-9-]{1,64}$/;

/** A URL of the template's (its host, for one), whatever the tenant. */
export function anyTenantUrl(template: string): URL {
  return new URL(template.replace(TENANT_PLACEHOLDER, 'x'));
}

/**
 * Refuses a multi-tenant directory's metadata (ProviderUnavailableError) unless its issuer is a
 * tenant template on the origin it was discovered from, and its endpoints are there to use.
 */
export function checkTenantTemplate(metadata: Readonly<Record<string, unknown>>, discoveryUrl: string): void {
  for (const field of ['authorization_endpoint', 'token_endpoint', 'jwks_uri']) {
    const value = metadata[field];
    if (typeof value !== 'string' || value === '')
      throw new ProviderUnavailableError(`discovery: answer has no ${field}`);
  }
  const issuer = String(metadata.issuer);
  const origin = new URL(discoveryUrl).origin;
  if (!issuer.includes(TENANT_PLACEHOLDER) || anyTenantUrl(issuer).origin !== origin)
    throw new ProviderUnavailableError(
      `discovery: multi-tenant issuer "${issuer}" is not a tenant template on ${origin}`,
    );
}

/**
 * The issuer a token must carry: the template filled with the token's own tenant, or undefined
 * (no token of the template's) when the tenant is malformed or not among `allowedTenants`. Tenant
 * ids are GUIDs, the same in either case: a tenant configured in upper case is the token's too.
 */
export function tenantIssuer(
  template: string,
  unverified: JWTPayload,
  allowedTenants: readonly string[],
): string | undefined {
  const tid = unverified.tid;
  if (typeof tid !== 'string' || !TENANT_ID.test(tid)) return undefined;
  if (allowedTenants.length > 0) {
    const lower = tid.toLowerCase();
    if (!allowedTenants.some((allowed) => allowed.toLowerCase() === lower)) return undefined;
  }
  return template.replace(TENANT_PLACEHOLDER, tid);
}

/** Whether `issuer` has the template's form (some tenant in its place): before any signature work. */
export function fitsTenantTemplate(template: string, issuer: string): boolean {
  const [before, after] = template.split(TENANT_PLACEHOLDER) as [string, string];
  return issuer.length > before.length + after.length && issuer.startsWith(before) && issuer.endsWith(after);
}
