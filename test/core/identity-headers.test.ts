import { readFileSync } from 'node:fs';

import { expect } from 'chai';
import fc from 'fast-check';

import { HeaderValueError, type Identity, type NormalizeOptions } from '../../src/core/identity.js';
import { nativeDecision } from '../../src/inserver/policy.js';
import { fallbackCore, loadAddonCore } from '../../src/native/index.js';
import {
  forwardEdits,
  identityHeaderPairs,
  inboundAliases,
  mayCarryIdentityAliases,
} from '../../src/core/http/header-policy.js';
import { coresUnderTest } from '../support/cores.js';

interface HeaderVector {
  name: string;
  inbound: Array<[string, string]>;
  identity: string | Identity | null;
  options?: NormalizeOptions;
  error?: 'forbidden-character' | 'type';
}
const vectors = JSON.parse(readFileSync(new URL('../vectors/headers.json', import.meta.url), 'utf8')) as {
  identities: Record<string, Identity>;
  vectors: HeaderVector[];
};
/** A fresh copy per use, so no test sees another's cached headers. */
const identityOf = (vector: HeaderVector): Identity | null =>
  vector.identity === null
    ? null
    : structuredClone(typeof vector.identity === 'string' ? vectors.identities[vector.identity]! : vector.identity);

describe('alias-strip fast path', () => {
  const name = fc
    .array(
      fc.constantFrom(
        'x',
        'X',
        '-',
        '_',
        '.',
        'platform',
        'PLATFORM',
        'ms',
        'client',
        'principal',
        'token',
        'accept',
        'a',
      ),
      { minLength: 1, maxLength: 8 },
    )
    .map((parts) => parts.join(''));
  const value = fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('a\rb', 'a\nb', 'a\u0000b'));

  it('skips the core only when the core would remove nothing', () => {
    const native = loadAddonCore();
    fc.assert(
      fc.property(
        fc.array(fc.tuple(name, value), { maxLength: 8 }),
        fc.constantFrom('X-PLATFORM-', 'x_ms_', 'X-A.'),
        (pairs, prefix) => {
          const removed = native.normalizeHeaders(pairs, null, { prefix }).remove;
          expect(fallbackCore.normalizeHeaders(pairs, null, { prefix }).remove).to.deep.equal(removed);
          if (!mayCarryIdentityAliases(pairs, prefix)) expect(removed, JSON.stringify(pairs)).to.deep.equal([]);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('flags aliases and forbidden characters', () => {
    expect(
      mayCarryIdentityAliases(
        [
          ['accept', '*/*'],
          ['cookie', 'a=b'],
        ],
        'X-PLATFORM-',
      ),
    ).to.equal(false);
    expect(mayCarryIdentityAliases([['x_platform_client_principal', 'x']], 'X-PLATFORM-')).to.equal(true);
    expect(mayCarryIdentityAliases([['X.Platform.Token.A', 'x']], 'X-PLATFORM-')).to.equal(true);
    expect(mayCarryIdentityAliases([['x-note', 'a\rb']], 'X-PLATFORM-')).to.equal(true);
  });
});

describe('identity headers applied per request', () => {
  for (const { name, load } of coresUnderTest()) {
    describe(name, () => {
      it('split into the alias strip and the identity headers, give exactly what normalize gives, for every vector', () => {
        const core = load();
        let checked = 0;
        for (const vector of vectors.vectors.filter((v) => v.error === undefined)) {
          const identity = identityOf(vector);
          const options = vector.options ?? {};
          const whole = core.normalizeHeaders(vector.inbound, identity, options);
          expect(inboundAliases(core, vector.inbound, options), vector.name).to.deep.equal(whole.remove);
          if (identity !== null) {
            expect(identityHeaderPairs(core, identity, options), vector.name).to.deep.equal(whole.set);
            // The core's edit list for a forward, and what the in-server host hands its module for it.
            const origin = { scheme: 'http', host: 'h' } as const;
            const edits = forwardEdits(
              { normalizer: core, options, behindTrustedProxy: false },
              vector.inbound,
              identity,
              origin,
              '127.0.0.1',
            );
            expect(edits.remove, vector.name).to.deep.equal([
              ...new Set(whole.remove.map((name) => name.toLowerCase())),
            ]);
            expect(edits.set, vector.name).to.equal(identityHeaderPairs(core, identity, options));
            const forwarded: Array<[string, string]> = [
              ['X-Forwarded-For', '127.0.0.1'],
              ['X-Forwarded-Proto', 'http'],
              ['X-Forwarded-Host', 'h'],
            ];
            expect(nativeDecision({ kind: 'forward', identity, origin, edits }), vector.name).to.deep.equal({
              kind: 'continue',
              remove: edits.remove,
              set: [...whole.set, ...forwarded],
            });
            checked++;
          }
        }
        expect(checked).to.be.greaterThan(5);
      });

      it("builds an identity's headers once per identity and options, and again for other options", () => {
        const core = load();
        const identity = structuredClone(vectors.identities[Object.keys(vectors.identities)[0]!]!);
        const first = identityHeaderPairs(core, identity, { prefix: 'X-PLATFORM-', exposeTokens: true });
        expect(identityHeaderPairs(core, identity, { prefix: 'X-PLATFORM-', exposeTokens: true })).to.equal(first);
        // Shared by every request of the identity: frozen, so no caller can change another request's headers.
        expect(Object.isFrozen(first) && first.every((pair) => Object.isFrozen(pair))).to.equal(true);
        const other = identityHeaderPairs(core, identity, { prefix: 'X-MS-', exposeTokens: true });
        expect(other).to.not.equal(first);
        expect(other.map(([n]) => n).every((n) => n.startsWith('X-MS-'))).to.equal(true);
        expect(
          identityHeaderPairs(core, structuredClone(identity), { prefix: 'X-PLATFORM-', exposeTokens: true }),
        ).to.deep.equal(first);
      });

      it('refuses an identity whose value could split a header on every request, not only the first', () => {
        const core = load();
        const identity = {
          ...structuredClone(vectors.identities[Object.keys(vectors.identities)[0]!]!),
          userName: 'a\r\nX-Injected: 1',
        };
        expect(() => identityHeaderPairs(core, identity, {})).to.throw(HeaderValueError);
        expect(() => identityHeaderPairs(core, identity, {})).to.throw(HeaderValueError);
      });
    });
  }
});
