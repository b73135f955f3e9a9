// Error codes arrive from providers' answers and, on the callback, from
// whoever crafted the link the browser followed. gatehouse writes them to its
// log and names them on its own pages, so both uses are bounded here: a link
// must not put words of its choosing on gatehouse's page (content spoofing),
// and an answer must not put kilobytes or control characters into the log.
import { ProviderRefusedError } from './errors.js';

/** Longest code kept; the registered ones are at most 26 characters. */
const MAX_CODE_LENGTH = 64;
/** RFC 6749 §4.1.2.1 / §5.2: error = 1*( %x20-21 / %x23-5B / %x5D-7E ). */
const CODE_SYNTAX = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * The codes the specifications register for authorization and token answers
 * (RFC 6749 §4.1.2.1 and §5.2, OpenID Connect Core §3.1.2.6, RFC 6750 §3.1).
 */
const REGISTERED_CODES: ReadonlySet<string> = new Set([
  'invalid_request',
  'unauthorized_client',
  'access_denied',
  'unsupported_response_type',
  'invalid_scope',
  'server_error',
  'temporarily_unavailable',
  'invalid_client',
  'invalid_grant',
  'unsupported_grant_type',
  'interaction_required',
  'login_required',
  'account_selection_required',
  'consent_required',
  'invalid_request_uri',
  'invalid_request_object',
  'request_not_supported',
  'request_uri_not_supported',
  'registration_not_supported',
  'invalid_token',
  'insufficient_scope',
]);

/** What a code is logged and matched as: itself when well-formed and short, else `provider_error`. */
export function loggableErrorCode(value: unknown): string {
  return typeof value === 'string' && value.length <= MAX_CODE_LENGTH && CODE_SYNTAX.test(value)
    ? value
    : 'provider_error';
}

/** The code a page may name: only a registered one; a provider's own codes stay in the log. */
export function shownErrorCode(value: unknown): string | undefined {
  return typeof value === 'string' && REGISTERED_CODES.has(value) ? value : undefined;
}

/** The refusal a provider's error answer means, its code bounded: `<what> <code>`. */
export function refusalWithCode(what: string, error: unknown): ProviderRefusedError {
  const code = loggableErrorCode(error);
  return new ProviderRefusedError(`${what} ${code}`, code);
}
