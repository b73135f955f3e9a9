// "Did you mean": close misspellings get the name they meant; anything else gets nothing.
import { expect } from 'chai';

import { closestName, didYouMean } from '../../src/core/closest-name.js';

describe('closest name', () => {
  const flags = ['host', 'port', 'upstream', 'config', 'workers', 'metrics-port', 'metrics-host', 'forward-auth'];

  it('names the known name a small misspelling meant, a different case included', () => {
    expect(closestName('prot', flags)).to.equal('port');
    expect(closestName('upstrem', flags)).to.equal('upstream');
    expect(closestName('metric-port', flags)).to.equal('metrics-port');
    expect(closestName('forwardauth', flags)).to.equal('forward-auth');
    expect(closestName('excludedPath', ['excludedPaths', 'redirectToProvider'])).to.equal('excludedPaths');
    expect(closestName('CONFIG', flags)).to.equal('config');
  });

  it('names nothing when no known name is close for its length', () => {
    expect(closestName('x', flags)).to.equal(undefined);
    expect(closestName('verbose', flags)).to.equal(undefined);
    expect(closestName('surprise', flags)).to.equal(undefined);
    expect(closestName('port', [])).to.equal(undefined);
  });

  it('is said as a parenthesis, quoted as the caller writes names', () => {
    expect(didYouMean('prot', flags, (name) => `--${name}`)).to.equal(' (did you mean --port?)');
    expect(didYouMean('tokenStor', ['tokenStore'])).to.equal(' (did you mean "tokenStore"?)');
    expect(didYouMean('zzz', flags)).to.equal('');
  });
});
