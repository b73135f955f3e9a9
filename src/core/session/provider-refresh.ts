// A session's refresh at its provider: the provider's answer, and the record it makes (or why
// there is none). Sessions decides when to ask and where the record goes.
import type { Logger } from '../../logging.js';
import { secondsSince, type AuthMetrics } from '../auth-metrics.js';
import { unsendableHeaderValue } from '../identity.js';
import type { RefreshedTokens } from '../providers/provider.js';
import type { SessionRecord } from './record.js';

/** The refreshed record, or why the provider gave none: it could not be reached, or it refused. */
export type ProviderRefresh =
  | { readonly ok: true; readonly record: SessionRecord }
  | { readonly ok: false; readonly reason: 'unavailable' | 'refused' };

/**
 * `redeem` asks the provider; its answer, counted and timed, becomes `record` with the new tokens
 * (and the new end `extendedUntil`, for a session renewed within its refresh extension).
 */
export async function redeemAtProvider(
  record: SessionRecord,
  redeem: () => Promise<RefreshedTokens>,
  extendedUntil: number | undefined,
  logger: Logger,
  metrics: AuthMetrics,
): Promise<ProviderRefresh> {
  let tokens: RefreshedTokens;
  const started = performance.now();
  try {
    tokens = await redeem();
  } catch (error) {
    const unavailable = (error as Error).name === 'ProviderUnavailableError';
    logger.warn({ provider: record.provider, reason: (error as Error).message }, 'token refresh failed');
    metrics.providerCall(record.provider, 'refresh', secondsSince(started));
    metrics.refresh(record.provider, unavailable ? 'unavailable' : 'refused');
    return { ok: false, reason: unavailable ? 'unavailable' : 'refused' };
  }
  metrics.providerCall(record.provider, 'refresh', secondsSince(started));
  const unsendable = unsendableHeaderValue({ userId: record.userId, userName: record.userName, tokens });
  if (unsendable !== undefined) {
    // An answer that cannot be used, as one that does not parse: the session is not given tokens that would fail every request.
    logger.warn(
      { provider: record.provider, reason: `the provider's ${unsendable} holds a control character` },
      'token refresh failed',
    );
    metrics.refresh(record.provider, 'refused');
    return { ok: false, reason: 'refused' };
  }
  const refreshed: SessionRecord = {
    ...record,
    ...(extendedUntil !== undefined ? { expiresAt: extendedUntil } : {}),
    // Groups and roles as the provider tells them now: a member removed loses access here.
    ...(tokens.access !== undefined ? { access: tokens.access } : {}),
    tokens: {
      ...record.tokens,
      ...(tokens.accessToken !== undefined ? { accessToken: tokens.accessToken } : {}),
      ...(tokens.idToken !== undefined ? { idToken: tokens.idToken } : {}),
      ...(tokens.refreshToken !== undefined ? { refreshToken: tokens.refreshToken } : {}),
      ...(tokens.accessTokenExpiresAt !== undefined ? { accessTokenExpiresAt: tokens.accessTokenExpiresAt } : {}),
    },
  };
  return { ok: true, record: refreshed };
}

/** Whether the stored record carries other tokens than the one a refresh was asked for (another instance refreshed it). */
export function refreshedSince(cached: SessionRecord, stored: SessionRecord): boolean {
  return (
    stored.tokens.refreshToken !== cached.tokens.refreshToken || stored.tokens.accessToken !== cached.tokens.accessToken
  );
}
