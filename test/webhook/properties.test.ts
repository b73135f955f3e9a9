// Property tests of the receiver over HTTP (docs/webhooks.md#error-responses): whatever JSON a forge sends, in whatever
// shape, a correctly signed delivery is a 200 when it is an object and a 400 otherwise, never a
// 500; and no body is ever processed under a signature that does not match it.
import { createHmac } from 'node:crypto';

import { expect } from 'chai';
import fc from 'fast-check';

import { deliver, request, SECRET, sign, startReceiver, type Listening } from '../support/http.js';

const EVENTS = [
  'push',
  'pull_request',
  'issues',
  'ping',
  'release',
  'PUSH',
  '',
  'push ',
  '__proto__',
  'constructor',
  'x'.repeat(300),
];

// Payloads shaped like the handled events, with every field of any JSON type (or missing).
const anyJson = fc.jsonValue({ maxDepth: 3 });
const shaped = fc.record(
  {
    ref: anyJson,
    commits: fc.oneof(anyJson, fc.array(anyJson, { maxLength: 5 })),
    action: anyJson,
    number: fc.oneof(anyJson, fc.double(), fc.constant(Number.MAX_SAFE_INTEGER + 2)),
    repository: fc.oneof(
      anyJson,
      fc.record(
        { full_name: anyJson, name: anyJson, owner: fc.oneof(anyJson, fc.record({ login: anyJson })) },
        { requiredKeys: [] },
      ),
    ),
    pull_request: fc.oneof(anyJson, fc.record({ number: anyJson, title: anyJson }, { requiredKeys: [] })),
    issue: fc.oneof(anyJson, fc.record({ number: anyJson, title: anyJson }, { requiredKeys: [] })),
    __proto__: anyJson,
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  shaped.map((payload) => JSON.stringify(payload)),
  anyJson.map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 60 }),
  fc.constantFrom(
    '{',
    '{"a":1}{"b":2}',
    '\uFEFF{}',
    '{"a":"\uD800"}',
    '{"__proto__":{"polluted":true}}',
    ' {} ',
    '{"a":1,"a":2}',
    'null',
    '[]',
  ),
);

/** Whether the text is a JSON object, as the receiver must judge it (a leading BOM allowed, as documented). */
function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text.replace(/^\uFEFF/, ''));
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

describe('webhook receiver (property tests over HTTP)', () => {
  let server: Listening;
  before(async () => {
    server = await startReceiver({ secret: SECRET });
  });
  after(() => server.close());

  it('a correctly signed delivery: 200 with a message when the body is a JSON object, else 400; never a 500', async () => {
    let processed = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...EVENTS), body, async (event, text) => {
        const reply = await deliver(server.url, event, text);
        const what = `${JSON.stringify(event)} ${text.slice(0, 300)}`;
        expect(reply.headers['content-type'], what).to.equal('application/json; charset=utf-8');
        if (isJsonObject(text)) {
          expect(reply.status, `${what} → ${reply.text}`).to.equal(200);
          expect((reply.json as { message?: unknown }).message, what).to.be.a('string');
          processed++;
        } else {
          expect(reply.status, `${what} → ${reply.text}`).to.equal(400);
          expect((reply.json as { error?: unknown }).error, what).to.be.a('string');
        }
        expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
      }),
      { numRuns: 500 },
    );
    expect(processed).to.be.greaterThan(100);
  });

  it('a signature that does not match the body is a 401, whatever the body', async () => {
    const forged = fc.oneof(
      // The body's own signature with one hex digit changed (upper case included).
      fc.tuple(body, fc.nat(63), fc.constantFrom(...'0123456789abcdefABCDEF')).map(([text, at, digit]) => {
        const valid = sign(text);
        return { text, signature: `${valid.slice(0, 7 + at)}${digit}${valid.slice(8 + at)}` };
      }),
      // Another secret's, another body's, or another algorithm's.
      body.map((text) => ({
        text,
        signature: `sha256=${createHmac('sha256', `${SECRET}x`).update(text).digest('hex')}`,
      })),
      fc.tuple(body, body).map(([text, other]) => ({ text, signature: sign(other) })),
      body.map((text) => ({ text, signature: `sha1=${createHmac('sha1', SECRET).update(text).digest('hex')}` })),
      fc.tuple(body, fc.string({ maxLength: 80 })).map(([text, signature]) => ({ text, signature })),
    );
    await fc.assert(
      fc.asyncProperty(forged, async ({ text, signature }) => {
        fc.pre(signature !== sign(text));
        const reply = await request(server.url, {
          headers: { 'content-type': 'application/json', 'x-forge-event': 'push', 'x-forge-signature-256': signature },
          body: text,
        });
        expect(reply.status, `${JSON.stringify(signature)} ${text.slice(0, 200)}`).to.equal(401);
        expect(reply.json).to.deep.equal({ error: 'Invalid or missing webhook signature.' });
      }),
      { numRuns: 400 },
    );
  });
});
