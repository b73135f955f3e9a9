// The assertion as one more `set` edit of a forward, and a client's own copy of it stripped as a
// spoofed identity header (the prefix rule), by the native core and by its TypeScript fallback.
import { expect } from 'chai';

import { forwardEdits, type HeaderPolicy } from '../../../src/core/http/header-policy.js';
import type { Identity } from '../../../src/core/identity.js';
import { fallbackCore, loadAddonCore } from '../../../src/native/index.js';

const identity: Identity = {
  provider: 'corp',
  userId: 'u',
  userName: 'n',
  authType: 'corp',
  nameType: 'name',
  roleType: 'roles',
  claims: [],
};
const origin = { scheme: 'https', host: 'app.example.com' } as const;

for (const [kind, core] of [
  ['native core', loadAddonCore()],
  ['TypeScript fallback', fallbackCore],
] as const) {
  describe(`identity assertion header edits (${kind})`, () => {
    for (const prefix of ['X-PLATFORM-', 'X-ACME-']) {
      const name = `${prefix}CLIENT-PRINCIPAL-ASSERTION`;
      const policy: HeaderPolicy = { normalizer: core, options: { prefix }, behindTrustedProxy: false };
      const assertion = Object.freeze([name, 'signed.jwt.value'] as const);
      const spoofed: Array<[string, string]> = [
        [name, 'forged'],
        [name.toLowerCase().replaceAll('-', '_'), 'forged'],
        [name.toLowerCase().replaceAll('-', '.'), 'forged'],
      ];

      it(`${prefix}: a client's copies are removed, gatehouse's set once after the identity headers`, () => {
        const edits = forwardEdits(policy, spoofed, identity, origin, '192.0.2.1', assertion);
        for (const [inbound] of spoofed) expect(edits.remove).to.include(inbound.toLowerCase());
        expect(edits.set.filter(([n]) => n === name)).to.deep.equal([assertion]);
        expect(edits.set.at(-1)).to.equal(assertion);
        expect(edits.set.find(([n]) => n === `${prefix}CLIENT-PRINCIPAL-ID`)?.[1]).to.equal('u');
        // The same array for every request the same assertion rides on (hosts key caches on it).
        expect(forwardEdits(policy, [], identity, origin, '192.0.2.1', assertion).set).to.equal(edits.set);
      });

      it(`${prefix}: an anonymous request carries none, and a client's is removed`, () => {
        const edits = forwardEdits(policy, spoofed, null, origin, '192.0.2.1');
        for (const [inbound] of spoofed) expect(edits.remove).to.include(inbound.toLowerCase());
        expect(edits.set).to.deep.equal([]);
      });
    }
  });
}
