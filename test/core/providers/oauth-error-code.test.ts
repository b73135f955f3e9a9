import { expect } from 'chai';

import { loggableErrorCode, shownErrorCode } from '../../../src/core/providers/oauth-error-code.js';

describe('OAuth error codes from providers and callback links', () => {
  it('a well-formed code is logged as it is, up to 64 characters', () => {
    for (const code of [
      'access_denied',
      'bad_verification_code',
      'user_cancelled_authorize',
      'x'.repeat(64),
      'AADSTS50011 redirect',
    ]) {
      expect(loggableErrorCode(code)).to.equal(code);
    }
  });

  it('anything else is logged as provider_error', () => {
    const bad: unknown[] = [
      'x'.repeat(65),
      '',
      'line\nforged',
      'tab\there',
      'quote"d',
      'back\\slash',
      'accès_refusé',
      '\u202eevil',
      { message: 'object' },
      42,
      null,
    ];
    for (const value of bad) expect(loggableErrorCode(value), JSON.stringify(value)).to.equal('provider_error');
  });

  it('a page names only a registered code', () => {
    for (const code of [
      'access_denied',
      'invalid_grant',
      'login_required',
      'consent_required',
      'temporarily_unavailable',
      'invalid_token',
    ]) {
      expect(shownErrorCode(code)).to.equal(code);
    }
    for (const value of [
      'Account locked. Call 555-0100',
      'user_cancelled_authorize',
      'ACCESS_DENIED',
      'access_denied ',
      '',
      undefined,
      {},
    ]) {
      expect(shownErrorCode(value), JSON.stringify(value)).to.equal(undefined);
    }
  });
});
