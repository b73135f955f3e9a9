import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';

import { expect } from 'chai';

import { HeaderValueError, type Identity, type NormalizeOptions } from '../../src/core/identity.js';
import { coresUnderTest } from '../support/cores.js';

interface SignatureVector {
  name: string;
  secrets: string[];
  bodyHex: string;
  header: string | null;
  valid: boolean;
}

type ExpectedValue = string | { principalJson: string };
interface HeaderVector {
  name: string;
  inbound: Array<[string, string]>;
  identity: string | Identity | null;
  options?: NormalizeOptions;
  expect?: { remove: string[]; set: Array<[string, ExpectedValue]> };
  error?: 'forbidden-character' | 'type';
}

const signatures = JSON.parse(readFileSync(new URL('../vectors/signatures.json', import.meta.url), 'utf8')) as {
  vectors: SignatureVector[];
};
const headers = JSON.parse(readFileSync(new URL('../vectors/headers.json', import.meta.url), 'utf8')) as {
  identities: Record<string, Identity>;
  vectors: HeaderVector[];
};

/** Byte strings (one char per byte) back to text, so expectations read naturally. */
const text = (bytes: string): string => Buffer.from(bytes, 'latin1').toString('utf8');

describe('signature vectors', () => {
  it('cover the public example and both outcomes', () => {
    const publicVector = signatures.vectors.find((v) => v.name === 'public vector');
    expect(publicVector?.header).to.equal('sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17');
    expect(Buffer.from(publicVector!.bodyHex, 'hex').toString()).to.equal('Hello, World!');
    expect(signatures.vectors.filter((v) => v.valid)).to.have.length.greaterThan(5);
    expect(signatures.vectors.filter((v) => !v.valid)).to.have.length.greaterThan(15);
  });

  it('agree with node:crypto wherever they claim validity', () => {
    for (const vector of signatures.vectors.filter((v) => v.valid)) {
      const body = Buffer.from(vector.bodyHex, 'hex');
      const computed = vector.secrets
        .filter((s) => s !== '')
        .map((s) => `sha256=${createHmac('sha256', s).update(body).digest('hex')}`);
      expect(computed, vector.name).to.include(vector.header);
    }
  });

  for (const { name, load } of coresUnderTest()) {
    describe(name, () => {
      for (const vector of signatures.vectors) {
        it(`${vector.valid ? 'accepts' : 'rejects'}: ${vector.name}`, () => {
          const core = load();
          const body = Buffer.from(vector.bodyHex, 'hex');
          expect(core.verifySignature(vector.secrets, body, vector.header)).to.equal(vector.valid);
          expect(core.createVerifier(vector.secrets).verify(body, vector.header)).to.equal(vector.valid);
          if (vector.header !== null) {
            expect(
              core.verifySignature(vector.secrets, body, Buffer.from(vector.header, 'utf8')),
              'header as bytes',
            ).to.equal(vector.valid);
          }
        });
      }

      it('reads a body that is a view into a larger buffer without copying it out of range', () => {
        const core = load();
        const backing = Buffer.from('xxxxHello, World!yyyy');
        const view = backing.subarray(4, 4 + 13);
        const header = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
        expect(core.verifySignature(["It's a Secret to Everybody"], view, header)).to.equal(true);
        expect(core.verifySignature(["It's a Secret to Everybody"], new Uint8Array(view), header)).to.equal(true);
      });

      it('refuses a body that is not bytes with a TypeError', () => {
        const core = load();
        expect(() => core.verifySignature(['s'], 'Hello' as unknown as Uint8Array, 'sha256=')).to.throw(TypeError);
        expect(() => core.verifySignature(['s'], new Uint16Array(4) as unknown as Uint8Array, 'sha256=')).to.throw(
          TypeError,
        );
        expect(() => core.verifySignature('s' as unknown as string[], Buffer.alloc(1), 'sha256=')).to.throw(TypeError);
        expect(() => core.verifySignature([42 as unknown as string], Buffer.alloc(1), 'sha256=')).to.throw(TypeError);
      });
    });
  }
});

describe('header normalization vectors', () => {
  for (const { name, load } of coresUnderTest()) {
    describe(name, () => {
      for (const vector of headers.vectors) {
        it(vector.name, () => {
          const core = load();
          const identity = typeof vector.identity === 'string' ? headers.identities[vector.identity]! : vector.identity;
          const run = () => core.normalizeHeaders(vector.inbound, identity, vector.options);
          if (vector.error === 'forbidden-character') {
            expect(run).to.throw(HeaderValueError, /CR, LF or NUL/);
            return;
          }
          if (vector.error === 'type') {
            expect(run).to.throw(TypeError);
            return;
          }
          const result = run();
          expect(result.remove.map(text)).to.deep.equal(vector.expect!.remove);
          const expected = vector.expect!.set.map(([n, v]) => [
            n,
            typeof v === 'string' ? v : Buffer.from(v.principalJson, 'utf8').toString('base64'),
          ]);
          expect(result.set.map(([n, v]) => [n, text(v)])).to.deep.equal(expected);
        });
      }
    });
  }
});
