// gatehouse.identityAssertion in the configuration document: off by default, `{}` for the defaults.
import { expect } from 'chai';

import { AuthConfigError, resolveAuthConfig } from '../../../src/core/config/auth-config.js';
import { corpDocument } from '../../support/session-fixture.js';

function withAssertion(identityAssertion: unknown) {
  return { ...corpDocument, gatehouse: { identityAssertion } };
}

function problemsOf(identityAssertion: unknown): readonly string[] {
  try {
    resolveAuthConfig(withAssertion(identityAssertion), {});
  } catch (error) {
    expect(error).to.be.instanceOf(AuthConfigError);
    return (error as AuthConfigError).problems;
  }
  throw new Error('accepted');
}

describe('gatehouse.identityAssertion', () => {
  it('is off without the key', () => {
    expect(resolveAuthConfig(corpDocument, {}).config.identityAssertion).to.equal(undefined);
  });

  it('`{}` turns it on with the defaults: the request origin as audience, five minutes', () => {
    expect(resolveAuthConfig(withAssertion({}), {}).config.identityAssertion).to.deep.equal({
      audience: undefined,
      lifetimeMs: 300_000,
    });
  });

  it('takes an audience and a lifetime', () => {
    const { config } = resolveAuthConfig(withAssertion({ audience: 'urn:orders', lifetime: '00:02:30' }), {});
    expect(config.identityAssertion).to.deep.equal({ audience: 'urn:orders', lifetimeMs: 150_000 });
  });

  it('refuses a lifetime out of bounds or not a time span, and an empty audience, naming the key', () => {
    expect(problemsOf({ lifetime: '00:00:10' })).to.deep.equal([
      'gatehouse.identityAssertion.lifetime: expected from 00:00:30 to 01:00:00',
    ]);
    expect(problemsOf({ lifetime: '02:00:00' })[0]).to.include('expected from 00:00:30 to 01:00:00');
    expect(problemsOf({ lifetime: 300 })[0]).to.match(/^gatehouse\.identityAssertion\.lifetime: /);
    expect(problemsOf({ lifetime: '5m' })[0]).to.include('expected a time span "hh:mm:ss"');
    expect(problemsOf({ audience: '' })[0]).to.match(/^gatehouse\.identityAssertion\.audience: /);
    expect(problemsOf(true)[0]).to.match(/^gatehouse\.identityAssertion: /);
  });

  it('warns of an unknown key in it', () => {
    const { warnings } = resolveAuthConfig(withAssertion({ lifetme: '00:01:00' }), {});
    expect(warnings.join('\n')).to.include('gatehouse.identityAssertion.lifetme: unknown key, ignored');
  });
});
