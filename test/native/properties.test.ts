import { createHmac, timingSafeEqual } from 'node:crypto';

import { expect } from 'chai';
import fc from 'fast-check';

import type { Identity } from '../../src/core/identity.js';
import { fallbackCore, loadAddonCore, type GatehouseCore } from '../../src/native/index.js';

/** node:crypto's own answer, the reference both implementations must match. */
function reference(secrets: string[], body: Uint8Array, header: string): boolean {
  const received = Buffer.from(header, 'utf8');
  return secrets.some((secret) => {
    if (secret === '') return false;
    const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`, 'utf8');
    return expected.length === received.length && timingSafeEqual(expected, received);
  });
}

const anyText = fc.string({ unit: 'binary', maxLength: 40 });
// Secrets around and beyond the 64-byte HMAC block, where keys are hashed first.
const anySecret = fc.oneof(anyText, fc.string({ unit: 'binary', minLength: 60, maxLength: 200 }));
const loneSurrogateText = fc.string({
  unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  maxLength: 20,
});
const headerName = fc
  .array(
    fc.constantFrom(
      'x',
      'X',
      '-',
      '_',
      '.',
      'platform',
      'PLATFORM',
      'client',
      'CLIENT',
      'principal',
      'Principal',
      'token',
      'TOKEN',
      'id',
      'a',
      '1',
    ),
    { minLength: 1, maxLength: 10 },
  )
  .map((parts) => parts.join(''));

describe('native == fallback == node:crypto (property tests)', () => {
  let native: GatehouseCore;
  before(() => {
    native = loadAddonCore();
  });

  it('a correctly signed body verifies in both, under any secret and body', () => {
    fc.assert(
      fc.property(
        fc.array(anySecret, { minLength: 1, maxLength: 3 }),
        fc.uint8Array({ maxLength: 4096 }),
        fc.nat(),
        (secrets, body, pick) => {
          const signer = secrets[pick % secrets.length]!;
          const header = `sha256=${createHmac('sha256', signer).update(body).digest('hex')}`;
          const expected = reference(secrets, body, header);
          expect(expected).to.equal(signer !== '');
          expect(native.verifySignature(secrets, body, header)).to.equal(expected);
          expect(fallbackCore.verifySignature(secrets, body, header)).to.equal(expected);
          expect(native.createVerifier(secrets).verify(body, header)).to.equal(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('any single-character change to a valid header is rejected by both', () => {
    fc.assert(
      fc.property(
        anySecret.filter((s) => s !== ''),
        fc.uint8Array({ maxLength: 512 }),
        fc.nat(70),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 2 }),
        (secret, body, at, replacement) => {
          const valid = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
          const header = valid.slice(0, at) + replacement + valid.slice(at + 1);
          fc.pre(header !== valid);
          expect(native.verifySignature([secret], body, header)).to.equal(false);
          expect(fallbackCore.verifySignature([secret], body, header)).to.equal(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('arbitrary headers get the same answer from both', () => {
    fc.assert(
      fc.property(
        fc.array(anyText, { maxLength: 2 }),
        fc.uint8Array({ maxLength: 64 }),
        fc.oneof(
          anyText,
          fc
            .string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 })
            .map((h) => `sha256=${h}`),
        ),
        (secrets, body, header) => {
          const expected = reference(secrets, body, header);
          expect(native.verifySignature(secrets, body, header)).to.equal(expected);
          expect(fallbackCore.verifySignature(secrets, body, header)).to.equal(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('header normalization is identical for random inbound headers and identities', () => {
    const identity = fc.record({
      provider: fc.oneof(fc.constantFrom('aad', 'github', 'my-oidc'), loneSurrogateText),
      userId: loneSurrogateText,
      userName: anyText,
      authType: anyText,
      nameType: anyText,
      roleType: anyText,
      claims: fc.array(fc.record({ typ: loneSurrogateText, val: fc.oneof(anyText, loneSurrogateText) }), {
        maxLength: 4,
      }),
      tokens: fc.option(fc.record({ accessToken: anyText, refreshToken: anyText }, { requiredKeys: [] }), {
        nil: undefined,
      }),
    });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(headerName, fc.oneof(anyText, fc.constant('a\r\nb'))), { maxLength: 8 }),
        fc.option(identity, { nil: null }),
        fc.record({
          prefix: fc.constantFrom(undefined, '', 'X-PLATFORM-', 'x_ms_', 'X-A.'),
          exposeTokens: fc.boolean(),
        }),
        (inbound, id, options) => {
          const run = (core: GatehouseCore) => {
            try {
              return core.normalizeHeaders(inbound, id as Identity | null, options);
            } catch (error) {
              return { error: (error as Error).name };
            }
          };
          expect(run(native)).to.deep.equal(run(fallbackCore));
        },
      ),
      { numRuns: 400 },
    );
  });
});
