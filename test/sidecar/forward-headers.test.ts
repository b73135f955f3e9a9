import { expect } from 'chai';
import fc from 'fast-check';

import { fallbackCore, loadAddonCore } from '../../src/native/index.js';
import { mayCarryIdentityAliases } from '../../src/sidecar/forward-headers.js';

describe('alias-strip fast path', () => {
  const name = fc
    .array(fc.constantFrom('x', 'X', '-', '_', '.', 'platform', 'PLATFORM', 'ms', 'client', 'principal', 'token', 'accept', 'a'), { minLength: 1, maxLength: 8 })
    .map((parts) => parts.join(''));
  const value = fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('a\rb', 'a\nb', 'a\u0000b'));

  it('skips the core only when the core would remove nothing', () => {
    const native = loadAddonCore();
    fc.assert(
      fc.property(fc.array(fc.tuple(name, value), { maxLength: 8 }), fc.constantFrom('X-PLATFORM-', 'x_ms_', 'X-A.'), (pairs, prefix) => {
        const removed = native.normalizeHeaders(pairs, null, { prefix }).remove;
        expect(fallbackCore.normalizeHeaders(pairs, null, { prefix }).remove).to.deep.equal(removed);
        if (!mayCarryIdentityAliases(pairs, prefix)) expect(removed, JSON.stringify(pairs)).to.deep.equal([]);
      }),
      { numRuns: 1000 },
    );
  });

  it('flags aliases and forbidden characters', () => {
    expect(mayCarryIdentityAliases([['accept', '*/*'], ['cookie', 'a=b']], 'X-PLATFORM-')).to.equal(false);
    expect(mayCarryIdentityAliases([['x_platform_client_principal', 'x']], 'X-PLATFORM-')).to.equal(true);
    expect(mayCarryIdentityAliases([['X.Platform.Token.A', 'x']], 'X-PLATFORM-')).to.equal(true);
    expect(mayCarryIdentityAliases([['x-note', 'a\rb']], 'X-PLATFORM-')).to.equal(true);
  });
});
