// docs/webhooks.md over real HTTP: every row of the error table, its
// precedence, and the 200 shapes.
import { expect } from 'chai';

import { deliver, request, sign, startReceiver, SECRET, type Listening } from '../support/http.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const PUSH = JSON.stringify({
  ref: 'refs/heads/main',
  repository: { full_name: 'octo/hello', name: 'hello', owner: { login: 'octo' } },
  commits: [{ id: 'a' }, { id: 'b' }, { id: 'c' }],
});

describe('webhook contract (docs/webhooks.md)', () => {
  let server: Listening;
  before(async () => {
    server = await startReceiver({ secret: SECRET });
  });
  after(() => server.close());

  it('verifies the public vector (Hello, World!) and answers 400 because it is not JSON', async () => {
    expect(sign('Hello, World!')).to.equal('sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17');
    const reply = await deliver(server.url, 'push', 'Hello, World!');
    expect(reply.status).to.equal(400);
    expect(reply.json).to.deep.equal({ error: 'Request body is not valid JSON.' });
  });

  it('push → 200 with event, repository, ref, commits and message', async () => {
    const reply = await deliver(server.url, 'push', PUSH);
    expect(reply.status).to.equal(200);
    expect(reply.headers['content-type']).to.equal(JSON_TYPE);
    expect(reply.headers['x-content-type-options']).to.equal('nosniff');
    expect(reply.headers['cache-control']).to.equal('no-store');
    expect(reply.json).to.deep.equal({
      event: 'push',
      repository: 'octo/hello',
      ref: 'refs/heads/main',
      commits: 3,
      message: 'Processed push with 3 commit(s).',
    });
  });

  it('pull_request → 200 with action, number and title', async () => {
    const body = JSON.stringify({
      action: 'opened',
      number: 7,
      pull_request: { number: 7, title: 'Add gate' },
      repository: { full_name: 'octo/hello' },
    });
    const reply = await deliver(server.url, 'pull_request', body);
    expect(reply.status).to.equal(200);
    expect(reply.json).to.deep.equal({
      event: 'pull_request',
      repository: 'octo/hello',
      action: 'opened',
      number: 7,
      title: 'Add gate',
      message: 'Processed pull request #7 in octo/hello (action: opened).',
    });
  });

  it('issues → 200 with action, number and title', async () => {
    const body = JSON.stringify({
      action: 'closed',
      issue: { number: 12, title: 'Bug' },
      repository: { full_name: 'octo/hello' },
    });
    const reply = await deliver(server.url, 'issues', body);
    expect(reply.status).to.equal(200);
    expect(reply.json).to.deep.equal({
      event: 'issues',
      repository: 'octo/hello',
      action: 'closed',
      number: 12,
      title: 'Bug',
      message: 'Processed issue #12 in octo/hello (action: closed).',
    });
  });

  // Event names are exact: another case is another event.
  for (const event of ['ping', 'release', 'PUSH', 'Issues', 'pull-request']) {
    it(`"${event}" → 200 generic acknowledgement echoing the event`, async () => {
      const reply = await deliver(server.url, event, '{"zen":"Keep it logically awesome."}');
      expect(reply.status).to.equal(200);
      expect(reply.json).to.deep.equal({
        event,
        message: `Event "${event}" received; no handler for this event type.`,
      });
    });
  }

  it('absent X-Forge-Event → 200 generic acknowledgement with an empty event', async () => {
    const reply = await deliver(server.url, undefined, '{}');
    expect(reply.status).to.equal(200);
    expect(reply.json).to.deep.equal({
      event: '',
      message: 'Event received (no event type given); nothing to process.',
    });
  });

  describe('401: signature missing, malformed or not matching', () => {
    const cases: Array<[string, string | undefined]> = [
      ['missing', undefined],
      ['empty', ''],
      ['no sha256= prefix', sign(PUSH).slice(7)],
      ['sha1= prefix', `sha1=${sign(PUSH).slice(7)}`],
      ['upper-case hex', `sha256=${sign(PUSH).slice(7).toUpperCase()}`],
      ['truncated', sign(PUSH).slice(0, -1)],
      ['signed with another secret', sign(PUSH, 'wrong')],
      ['signature of another body', sign(`${PUSH} `)],
      ['multi-byte characters (latin1 bytes on the wire)', `sha256=${'é'.repeat(64)}`],
    ];
    for (const [name, header] of cases) {
      it(name, async () => {
        const reply = await request(server.url, {
          headers: {
            'content-type': 'application/json',
            'x-forge-event': 'push',
            ...(header === undefined ? {} : { 'x-forge-signature-256': header }),
          },
          body: PUSH,
        });
        expect(reply.status).to.equal(401);
        expect(reply.headers['content-type']).to.equal(JSON_TYPE);
        expect(reply.json).to.deep.equal({ error: 'Invalid or missing webhook signature.' });
      });
    }

    it('a UTF-8 header value of 71 bytes is a 401, not a crash', async () => {
      const raw = Buffer.from(`sha256=${'a'.repeat(62)}é`, 'utf8'); // 71 bytes
      const reply = await request(server.url, {
        headers: { 'x-forge-signature-256': raw.toString('latin1') },
        body: PUSH,
      });
      expect(reply.status).to.equal(401);
    });

    it('two signature headers are never accepted', async () => {
      const reply = await request(server.url, {
        headers: { 'x-forge-signature-256': [sign(PUSH), sign(PUSH)] },
        body: PUSH,
      });
      expect(reply.status).to.equal(401);
    });
  });

  describe('400: not JSON, or JSON that is not an object', () => {
    const cases: Array<[string, string, string]> = [
      ['malformed JSON', '{"a":', 'Request body is not valid JSON.'],
      ['empty body', '', 'Request body is not valid JSON.'],
      ['array', '[]', 'Request body must be a JSON object, got an array.'],
      ['null', 'null', 'Request body must be a JSON object, got null.'],
      ['string', '"x"', 'Request body must be a JSON object, got a string.'],
      ['number', '1', 'Request body must be a JSON object, got a number.'],
      ['boolean', 'true', 'Request body must be a JSON object, got a boolean.'],
      ['trailing garbage', '{} {}', 'Request body is not valid JSON.'],
    ];
    for (const [name, body, error] of cases) {
      it(name, async () => {
        const reply = await deliver(server.url, 'push', body);
        expect(reply.status).to.equal(400);
        expect(reply.headers['content-type']).to.equal(JSON_TYPE);
        expect(reply.json).to.deep.equal({ error });
      });
    }

    it('a hostile deeply nested body is a 400 or 200, never a crash', async () => {
      const body = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
      const reply = await deliver(server.url, 'push', body);
      expect(reply.status).to.equal(400);
      const after = await deliver(server.url, 'push', PUSH);
      expect(after.status).to.equal(200);
    });
  });

  it('405 with Allow: POST for every other method', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const reply = await request(server.url, { method });
      expect(reply.status, method).to.equal(405);
      expect(reply.headers.allow).to.equal('POST');
      expect(reply.headers['content-type']).to.equal(JSON_TYPE);
      expect(reply.json).to.have.property('error').that.is.a('string');
    }
    const head = await request(server.url, { method: 'HEAD' });
    expect(head.status).to.equal(405);
    expect(head.headers.allow).to.equal('POST');
  });

  it('other paths are JSON 404s, and a query string does not change the path', async () => {
    const reply = await request(server.url, { path: '/api/forge/webhook/extra' });
    expect(reply.status).to.equal(404);
    expect(reply.headers['content-type']).to.equal(JSON_TYPE);
    const withQuery = await request(server.url, {
      path: '/api/forge/webhook?source=test',
      headers: { 'x-forge-signature-256': sign(PUSH), 'x-forge-event': 'push', 'content-type': 'application/json' },
      body: PUSH,
    });
    expect(withQuery.status).to.equal(200);
  });
});

describe('webhook precedence (500, then 401, then 400)', () => {
  it('500 when the secret is unset, whatever the signature or body', async () => {
    const server = await startReceiver({ env: {} });
    try {
      for (const headers of [
        {},
        { 'x-forge-signature-256': 'garbage' },
        { 'x-forge-signature-256': sign('not json') },
      ]) {
        const reply = await request(server.url, { headers, body: 'not json' });
        expect(reply.status).to.equal(500);
        expect(reply.headers['content-type']).to.equal(JSON_TYPE);
        expect(reply.json).to.deep.equal({ error: 'Server is not configured with FORGE_WEBHOOK_SECRET.' });
      }
    } finally {
      await server.close();
    }
  });

  it('500 when the secret is empty, even with previous secrets set', async () => {
    const server = await startReceiver({ env: { FORGE_WEBHOOK_SECRET: '', FORGE_WEBHOOK_PREVIOUS_SECRETS: SECRET } });
    try {
      const reply = await deliver(server.url, 'push', PUSH);
      expect(reply.status).to.equal(500);
    } finally {
      await server.close();
    }
  });

  it('the 500 message names the configured variable', async () => {
    const server = await startReceiver({ env: {}, secretVariable: 'MY_HOOK_SECRET' });
    try {
      const reply = await deliver(server.url, 'push', PUSH);
      expect(reply.json).to.deep.equal({ error: 'Server is not configured with MY_HOOK_SECRET.' });
    } finally {
      await server.close();
    }
  });

  it('the secret is read from FORGE_WEBHOOK_SECRET', async () => {
    const server = await startReceiver({ env: { FORGE_WEBHOOK_SECRET: SECRET } });
    try {
      expect((await deliver(server.url, 'push', PUSH)).status).to.equal(200);
    } finally {
      await server.close();
    }
  });

  it('401 beats 400: a bad signature on a bad body is a 401', async () => {
    const server = await startReceiver({ secret: SECRET });
    try {
      const reply = await request(server.url, {
        headers: { 'x-forge-signature-256': sign('other') },
        body: '[not json',
      });
      expect(reply.status).to.equal(401);
    } finally {
      await server.close();
    }
  });
});

describe('secret rotation', () => {
  it('accepts the current and every previous secret, nothing else', async () => {
    const server = await startReceiver({
      env: { FORGE_WEBHOOK_SECRET: 'new-secret', FORGE_WEBHOOK_PREVIOUS_SECRETS: '["old-secret","older-secret"]' },
    });
    try {
      for (const [secret, status] of [
        ['new-secret', 200],
        ['old-secret', 200],
        ['older-secret', 200],
        ['oldest-secret', 401],
      ] as const) {
        const reply = await request(server.url, {
          headers: { 'x-forge-signature-256': sign(PUSH, secret), 'content-type': 'application/json' },
          body: PUSH,
        });
        expect(reply.status, secret).to.equal(status);
      }
    } finally {
      await server.close();
    }
  });

  it('a single previous secret may be given as plain text', async () => {
    const server = await startReceiver({
      env: { FORGE_WEBHOOK_SECRET: 'new', FORGE_WEBHOOK_PREVIOUS_SECRETS: 'old, with a comma' },
    });
    try {
      const reply = await request(server.url, {
        headers: { 'x-forge-signature-256': sign(PUSH, 'old, with a comma'), 'content-type': 'application/json' },
        body: PUSH,
      });
      expect(reply.status).to.equal(200);
    } finally {
      await server.close();
    }
  });
});

describe('fail closed', () => {
  it('an unexpected failure inside verification is a JSON 500, logged, and the server keeps serving', async () => {
    const { fallbackCore } = await import('../../src/native/index.js');
    let calls = 0;
    const core = {
      ...fallbackCore,
      createVerifier: () => ({
        verify: () => {
          calls++;
          if (calls === 1) throw new Error('verifier exploded');
          return true;
        },
      }),
    };
    const server = await startReceiver({ secret: SECRET, core });
    try {
      const first = await deliver(server.url, 'push', PUSH);
      expect(first.status).to.equal(500);
      expect(first.headers['content-type']).to.equal(JSON_TYPE);
      expect(first.json).to.deep.equal({ error: 'Internal error while processing the delivery.' });
      expect((await deliver(server.url, 'push', PUSH)).status).to.equal(200);
    } finally {
      await server.close();
    }
  });
});
