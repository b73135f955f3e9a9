import { expect } from 'chai';

import { promptParameter } from '../../../src/core/oidc/prompt-parameter.js';

describe('the prompt of an OpenID authorization request', () => {
  it('is the configured one when the sign-in asks for no account prompt', () => {
    expect(promptParameter('oidc', undefined, undefined, undefined)).to.equal(undefined);
    expect(promptParameter('google', 'consent', undefined, undefined)).to.equal('consent');
    expect(promptParameter('aad', 'login', undefined, ['select_account'])).to.equal('login');
  });

  it('select_account where the provider is known to take it (directory, Google, or said in prompt_values_supported), else login', () => {
    expect(promptParameter('aad', undefined, 'select_account', undefined)).to.equal('select_account');
    expect(promptParameter('google', undefined, 'select_account', undefined)).to.equal('select_account');
    expect(promptParameter('oidc', undefined, 'select_account', undefined)).to.equal('login');
    expect(promptParameter('oidc', undefined, 'select_account', ['none', 'login', 'select_account'])).to.equal(
      'select_account',
    );
    // What the provider says counts over what gatehouse assumes.
    expect(promptParameter('google', undefined, 'select_account', ['none', 'consent', 'login'])).to.equal('login');
    expect(promptParameter('oidc', undefined, 'login', undefined)).to.equal('login');
  });

  it('combines with the configured values (each once), except none, which stands alone; the directory takes one value; Apple none', () => {
    expect(promptParameter('google', 'consent', 'select_account', undefined)).to.equal('consent select_account');
    expect(promptParameter('oidc', 'login consent', 'login', undefined)).to.equal('login consent');
    expect(promptParameter('oidc', 'none', 'login', undefined)).to.equal('login');
    expect(promptParameter('aad', 'consent', 'select_account', undefined)).to.equal('select_account');
    expect(promptParameter('apple', undefined, 'select_account', undefined)).to.equal(undefined);
  });
});
