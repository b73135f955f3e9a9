// Raw bytes are verified exactly as sent; the body limit, stall timeout and
// body deadline hold; form-encoded deliveries work.
import { expect } from 'chai';

import { DEFAULT_BODY_DEADLINE_MS, resolveWebhookConfig } from '../../src/webhook/config.js';
import { deliver, request, sign, startReceiver, SECRET, type Listening } from '../support/http.js';
import { rawConnection, rawExchange } from '../support/raw-http.js';

const BODY_DEADLINE_MS = 1_200;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('webhook bodies', () => {
  let server: Listening;
  before(async () => {
    server = await startReceiver({
      secret: SECRET,
      bodyLimitBytes: 64 * 1024,
      bodyTimeoutMs: 300,
      bodyDeadlineMs: BODY_DEADLINE_MS,
    });
  });
  after(() => server.close());

  it('escape sequences like \\u001B verify over the bytes as sent', async () => {
    const body = '{"ref":"refs/heads/\\u001B[31mred","repository":{"full_name":"o/\\u00e9"},"commits":[]}';
    const reply = await deliver(server.url, 'push', body);
    expect(reply.status).to.equal(200);
    expect(reply.json).to.include({ ref: 'refs/heads/\u001B[31mred', repository: 'o/é' });
  });

  it('a body re-serialized after parsing no longer verifies', async () => {
    const sent = '{"ref":"refs/heads/\\u001B[31mred"}';
    const reply = await request(server.url, {
      headers: { 'x-forge-signature-256': sign(JSON.stringify(JSON.parse(sent))), 'content-type': 'application/json' },
      body: sent,
    });
    expect(reply.status).to.equal(401);
  });

  it('raw UTF-8 verifies and comes back intact', async () => {
    const body = Buffer.from('{"ref":"refs/heads/zoë-山田-🚀","repository":{"full_name":"o/r"},"commits":[1]}', 'utf8');
    const reply = await deliver(server.url, 'push', body);
    expect(reply.status).to.equal(200);
    expect(reply.json).to.include({ ref: 'refs/heads/zoë-山田-🚀', commits: 1 });
  });

  it('a leading BOM verifies as sent and is then ignored by the JSON step', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"commits":[1,2]}')]);
    const reply = await deliver(server.url, 'push', body);
    expect(reply.status).to.equal(200);
    expect(reply.json).to.include({ commits: 2 });
    const stripped = await request(server.url, { headers: { 'x-forge-signature-256': sign(body.subarray(3)) }, body });
    expect(stripped.status).to.equal(401);
  });

  it('invalid UTF-8 verifies as sent, then is a clear 400', async () => {
    const body = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]);
    const reply = await deliver(server.url, 'push', body);
    expect(reply.status).to.equal(400);
    expect(reply.json).to.deep.equal({ error: 'Request body is not valid UTF-8.' });
    const repaired = await request(server.url, {
      headers: { 'x-forge-signature-256': sign(Buffer.from(body.toString('utf8'))) },
      body,
    });
    expect(repaired.status).to.equal(401);
  });

  it('an empty body with a valid signature is a 400 (not an object)', async () => {
    const reply = await deliver(server.url, 'push', '');
    expect(reply.status).to.equal(400);
  });

  it('a body exactly at the limit is accepted', async () => {
    const filler = 'x'.repeat(64 * 1024 - '{"pad":""}'.length);
    const body = `{"pad":"${filler}"}`;
    expect(Buffer.byteLength(body)).to.equal(64 * 1024);
    expect((await deliver(server.url, 'ping', body)).status).to.equal(200);
  });

  it('413 when Content-Length exceeds the limit, before any body byte is read', async () => {
    const head =
      'POST /api/forge/webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      `X-Forge-Signature-256: ${sign('x')}\r\nContent-Length: ${64 * 1024 + 1}\r\n\r\n`;
    const { response, closed } = await rawExchange(server.url, [head, '{"a":']);
    expect(response).to.match(/^HTTP\/1\.1 413 /);
    expect(response).to.match(/content-type: application\/json; charset=utf-8/i);
    expect(response).to.match(/connection: close/i);
    expect(response).to.contain('{"error":"Request body exceeds the limit of 65536 bytes."}');
    expect(closed).to.equal(true);
  });

  it('413 for a chunked body that grows past the limit, and the server keeps serving', async () => {
    const piece = Buffer.alloc(16 * 1024, 0x20);
    const reply = await request(server.url, {
      headers: { 'x-forge-signature-256': sign('x'), 'content-type': 'application/json' },
      chunks: [piece, piece, piece, piece, piece, piece],
    }).catch((error: NodeJS.ErrnoException) => ({ status: error.code, json: undefined }));
    // The client may see the 413 or, having kept writing into a closing socket, a reset; never a 200.
    expect([413, 'ECONNRESET', 'EPIPE']).to.include(reply.status);
    if (reply.status === 413)
      expect(reply.json).to.deep.equal({ error: 'Request body exceeds the limit of 65536 bytes.' });
    expect((await deliver(server.url, 'ping', '{}')).status).to.equal(200);
  });

  it('413 for an oversized chunked body, seen over a raw socket', async () => {
    const head = `POST /api/forge/webhook HTTP/1.1\r\nHost: x\r\nX-Forge-Signature-256: ${sign('x')}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const chunk = Buffer.concat([
      Buffer.from(`${(40 * 1024).toString(16)}\r\n`),
      Buffer.alloc(40 * 1024, 0x20),
      Buffer.from('\r\n'),
    ]);
    const { response } = await rawExchange(server.url, [head, chunk, chunk]);
    expect(response).to.match(/^HTTP\/1\.1 413 /);
  });

  it('a client that stalls mid-body is timed out with 408 and disconnected', async () => {
    const head = `POST /api/forge/webhook HTTP/1.1\r\nHost: x\r\nX-Forge-Signature-256: ${sign('{}')}\r\nContent-Length: 100\r\n\r\n`;
    const { response, closed } = await rawExchange(server.url, [head, '{"a":'], 5000);
    expect(response).to.match(/^HTTP\/1\.1 408 /);
    expect(response).to.contain('{"error":"Request body was not received in time."}');
    expect(closed).to.equal(true);
  });

  it('a client that drips its body, never stalling, is cut off at the body deadline with 408 and disconnected', async () => {
    const body = '{"pad":"' + 'x'.repeat(200) + '"}';
    const { socket, received } = rawConnection(server.url);
    socket.write(
      `POST /api/forge/webhook HTTP/1.1\r\nHost: x\r\nX-Forge-Signature-256: ${sign(body)}\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    const started = Date.now();
    let closed = false;
    void received.then(() => (closed = true));
    // A byte every 100 ms: three times inside the stall timeout, so only the deadline can end it.
    for (let sent = 0; sent < body.length && !closed; sent++) {
      socket.write(body[sent]!);
      await pause(100);
    }
    const response = await received;
    expect(Date.now() - started).to.be.at.least(BODY_DEADLINE_MS - 50);
    expect(response).to.match(/^HTTP\/1\.1 408 /);
    expect(response).to.contain('{"error":"Request body was not received in time."}');
    // Still serving, and a body that arrives in time is taken.
    expect((await deliver(server.url, 'ping', '{}')).status).to.equal(200);
  });

  it('a body that arrives in pieces but within the deadline is taken', async () => {
    const body = '{"zen":"slow and steady"}';
    const { socket, received } = rawConnection(server.url);
    socket.write(
      `POST /api/forge/webhook HTTP/1.1\r\nHost: x\r\nX-Forge-Event: ping\r\nX-Forge-Signature-256: ${sign(body)}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    );
    for (const piece of [body.slice(0, 8), body.slice(8, 16), body.slice(16)]) {
      socket.write(piece);
      await pause(200);
    }
    expect(await received).to.match(/^HTTP\/1\.1 200 /);
  });

  it('the body deadline is read from GATEHOUSE_WEBHOOK_BODY_DEADLINE_MS and must be a positive integer', () => {
    expect(resolveWebhookConfig({ env: { GATEHOUSE_WEBHOOK_BODY_DEADLINE_MS: '5000' } }).bodyDeadlineMs).to.equal(5000);
    expect(resolveWebhookConfig({ env: {} }).bodyDeadlineMs).to.equal(DEFAULT_BODY_DEADLINE_MS);
    expect(() => resolveWebhookConfig({ env: { GATEHOUSE_WEBHOOK_BODY_DEADLINE_MS: '0' } })).to.throw(
      /GATEHOUSE_WEBHOOK_BODY_DEADLINE_MS must be a positive integer/,
    );
  });

  it('body timeouts longer than a timer can wait are refused: node would fire them after 1 ms', () => {
    expect(resolveWebhookConfig({ env: { GATEHOUSE_WEBHOOK_BODY_TIMEOUT_MS: '2147483647' } }).bodyTimeoutMs).to.equal(
      2_147_483_647,
    );
    for (const variable of ['GATEHOUSE_WEBHOOK_BODY_TIMEOUT_MS', 'GATEHOUSE_WEBHOOK_BODY_DEADLINE_MS']) {
      expect(() => resolveWebhookConfig({ env: { [variable]: '2147483648' } })).to.throw(
        `${variable} must be a positive integer of at most 2147483647 (got "2147483648")`,
      );
    }
    expect(() => resolveWebhookConfig({ bodyTimeoutMs: 3e9 })).to.throw(
      /GATEHOUSE_WEBHOOK_BODY_TIMEOUT_MS must be a positive integer of at most 2147483647/,
    );
  });

  it('numeric settings are decimal digits: what Number() would also take is refused, an empty variable is unset', () => {
    for (const value of ['1e3', '0x10', ' 60 ', '5000.0', '-5']) {
      expect(() => resolveWebhookConfig({ env: { GATEHOUSE_WEBHOOK_BODY_LIMIT: value } }), value).to.throw(
        `GATEHOUSE_WEBHOOK_BODY_LIMIT must be a positive integer (got ${JSON.stringify(value)})`,
      );
    }
    expect(resolveWebhookConfig({ env: { GATEHOUSE_WEBHOOK_BODY_LIMIT: '' } }).bodyLimitBytes).to.equal(
      25 * 1024 * 1024,
    );
  });

  it('a malformed Content-Length never reaches the handler', async () => {
    const head = `POST /api/forge/webhook HTTP/1.1\r\nHost: x\r\nX-Forge-Signature-256: ${sign('{}')}\r\nContent-Length: 2x\r\n\r\n{}`;
    const { response } = await rawExchange(server.url, [head]);
    expect(response).to.match(/^HTTP\/1\.1 400 /); // refused by Node's HTTP parser
  });

  describe('application/x-www-form-urlencoded deliveries', () => {
    const form = (payload: string): string => `payload=${encodeURIComponent(payload)}`;

    it('verifies over the raw form body, then decodes payload as JSON', async () => {
      const body = form('{"ref":"refs/heads/main","repository":{"full_name":"o/r"},"commits":[1,2]}');
      const reply = await request(server.url, {
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-forge-event': 'push',
          'x-forge-signature-256': sign(body),
        },
        body,
      });
      expect(reply.status).to.equal(200);
      expect(reply.json).to.deep.equal({
        event: 'push',
        repository: 'o/r',
        ref: 'refs/heads/main',
        commits: 2,
        message: 'Processed push with 2 commit(s).',
      });
    });

    it('the signature over the decoded payload does not verify', async () => {
      const payload = '{"zen":"a b+c"}';
      const reply = await request(server.url, {
        headers: {
          'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
          'x-forge-signature-256': sign(payload),
        },
        body: form(payload),
      });
      expect(reply.status).to.equal(401);
    });

    it('+ decodes to a space and %XX to UTF-8', async () => {
      const body = 'payload=%7B%22ref%22%3A%22a+b%20%C3%A9%22%7D';
      const reply = await request(server.url, {
        headers: {
          'content-type': 'Application/X-WWW-Form-Urlencoded',
          'x-forge-event': 'push',
          'x-forge-signature-256': sign(body),
        },
        body,
      });
      expect(reply.status).to.equal(200);
      expect(reply.json).to.include({ ref: 'a b é' });
    });

    for (const [name, body, error] of [
      [
        'no payload field',
        'other=1',
        'Form-encoded delivery has no "payload" field (sending JSON? use Content-Type: application/json).',
      ],
      [
        'two payload fields',
        'payload=%7B%7D&payload=%7B%7D',
        'Form-encoded delivery has more than one "payload" field.',
      ],
      ['payload not JSON', 'payload=nope', 'The "payload" field is not valid JSON.'],
      ['payload an array', 'payload=%5B%5D', 'The "payload" field must be a JSON object, got an array.'],
    ] as const) {
      it(`400: ${name}`, async () => {
        const reply = await request(server.url, {
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forge-signature-256': sign(body) },
          body,
        });
        expect(reply.status).to.equal(400);
        expect(reply.json).to.deep.equal({ error });
      });
    }
  });
});
