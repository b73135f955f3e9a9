// Where a presented session stands, in the lifecycle's terms.
import type { ReauthReason } from './lifecycle.js';
import type { SessionRecord } from './record.js';

export interface AssessmentContext {
  readonly now: number;
  readonly app: string;
  /** Fingerprints of the current provider configurations, by provider alias. */
  readonly configFingerprints: ReadonlyMap<string, string>;
  /** The host of this request (already validated). */
  readonly host: string;
  /** Refresh when the access token expires within this many ms. */
  readonly refreshWindowMs: number;
  /** Unused for longer than the idle timeout (activity.ts). */
  readonly idle?: boolean;
}

export type Assessment =
  | { readonly kind: 'valid' }
  | { readonly kind: 'expiring' }
  | { readonly kind: 'reauth'; readonly reason: ReauthReason };

/**
 * A cookie alone never authenticates: the record must exist, decrypt (the
 * store returns undefined otherwise), belong to this app, be within its
 * lifetime, match the provider configuration of today and the host it was
 * established on.
 */
export function assessSession(record: SessionRecord | undefined, context: AssessmentContext): Assessment {
  if (record === undefined) return { kind: 'reauth', reason: 'record-missing' };
  if (record.app !== context.app) return { kind: 'reauth', reason: 'record-of-another-app' };
  // Before the expiry: an idle session is not one the refresh extension may renew.
  if (context.idle === true) return { kind: 'reauth', reason: 'idle-timeout' };
  if (record.expiresAt <= context.now) return { kind: 'reauth', reason: 'cookie-expired' };
  if (context.configFingerprints.get(record.provider) !== record.configFingerprint) {
    return { kind: 'reauth', reason: 'configuration-changed' };
  }
  if (record.host.toLowerCase() !== context.host.toLowerCase())
    return { kind: 'reauth', reason: 'callback-host-mismatch' };
  const expiresAt = record.tokens.accessTokenExpiresAt;
  if (expiresAt !== undefined && expiresAt - context.refreshWindowMs <= context.now) return { kind: 'expiring' };
  return { kind: 'valid' };
}
