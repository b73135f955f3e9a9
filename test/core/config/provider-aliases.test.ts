// How a name written in a document or a sign-in path finds the enabled provider it means.
import { expect } from 'chai';

import {
  aliasIgnoringCase,
  BUILT_IN_ALIASES,
  BUILT_IN_PROVIDERS,
  providerAliasNamed,
  RESERVED_ALIASES,
} from '../../../src/core/config/provider-aliases.js';

describe('provider aliases', () => {
  const enabled = new Set(['aad', 'github', 'Corp']);

  it('an alias as written names its provider', () => {
    expect(providerAliasNamed('aad', enabled)).to.equal('aad');
    expect(providerAliasNamed('Corp', enabled)).to.equal('Corp');
  });

  it("a built-in provider by its key or its alias, in any case (App Service writes 'azureactivedirectory')", () => {
    for (const name of ['azureActiveDirectory', 'azureactivedirectory', 'AAD', 'gitHub', 'GITHUB'])
      expect(providerAliasNamed(name, enabled), name).to.equal(name.toLowerCase().startsWith('a') ? 'aad' : 'github');
  });

  it('a built-in provider that is not enabled is no provider, even when a custom alias differs from its name only in case', () => {
    expect(providerAliasNamed('google', enabled)).to.equal(undefined);
    expect(providerAliasNamed('Google', new Map([['GOOGLE', {}]]))).to.equal(undefined);
  });

  it('a custom alias but for case, from a set or a map of providers; none that fits is undefined', () => {
    expect(providerAliasNamed('corp', enabled)).to.equal('Corp');
    expect(providerAliasNamed('CORP', new Map([['Corp', {}]]))).to.equal('Corp');
    expect(aliasIgnoringCase('cOrP', enabled)).to.equal('Corp');
    expect(providerAliasNamed('corporate', enabled)).to.equal(undefined);
    expect(aliasIgnoringCase('corporate', enabled)).to.equal(undefined);
  });

  it("every built-in key has an alias, and no alias is one of gatehouse's own pages", () => {
    expect(BUILT_IN_ALIASES).to.deep.equal(Object.values(BUILT_IN_PROVIDERS));
    for (const reserved of RESERVED_ALIASES) expect(BUILT_IN_ALIASES).not.to.include(reserved);
  });
});
