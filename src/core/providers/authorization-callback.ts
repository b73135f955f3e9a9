import { constantTimeEqual } from '../crypto/equal.js';
import { ProviderRefusedError } from './errors.js';
import type { LoginCallback } from './provider.js';

/** The code of an OAuth 2.0 authorization callback whose state matches the login's (else refused). */
export function authorizationCode(callback: LoginCallback): string {
  if (!constantTimeEqual(callback.params.get('state') ?? '', callback.state))
    throw new ProviderRefusedError('callback: state mismatch', 'invalid_state');
  const code = callback.params.get('code');
  if (code === null || code === '')
    throw new ProviderRefusedError('callback: no authorization code', 'invalid_request');
  return code;
}
