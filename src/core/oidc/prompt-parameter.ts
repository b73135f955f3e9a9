// The `prompt` of an OpenID authorization request that asks for an account prompt.
import type { OidcKind } from '../config/provider-settings.js';
import type { AccountPrompt } from '../providers/provider.js';

/**
 * The `prompt` parameter for a sign-in: the configured one (`loginParameters`), with the account
 * prompt this sign-in asks for, if any.
 *
 * `select_account` is standard (OpenID Connect Core §3.1.2.1) but optional: Microsoft's and Google's
 * providers take it, others say so in `prompt_values_supported`; where it is not known to be
 * understood, `login` asks for it in the way every provider supports (some, oidc-provider among
 * them, refuse a value they do not know). Microsoft's takes one value, so the asked one replaces
 * the configured one; elsewhere values combine (Google's default `consent`, which keeps refresh
 * tokens coming, stays), except `none`, which must stand alone. Apple's has no prompt.
 */
export function promptParameter(
  kind: OidcKind,
  configured: string | undefined,
  asked: AccountPrompt | undefined,
  supported: readonly string[] | undefined,
): string | undefined {
  if (asked === undefined || kind === 'apple') return configured;
  const knowsSelectAccount =
    supported !== undefined ? supported.includes('select_account') : kind === 'aad' || kind === 'google';
  const value = asked === 'select_account' && !knowsSelectAccount ? 'login' : asked;
  if (kind === 'aad') return value;
  const values = (configured ?? '').split(' ').filter((v) => v !== '' && v !== 'none');
  return [...new Set([...values, value])].join(' ');
}
