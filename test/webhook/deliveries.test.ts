import { expect } from 'chai';

import { DeliveryLog } from '../../src/webhook/deliveries.js';
import { deliver, SECRET, startReceiver } from '../support/http.js';
import { capturingLogger } from '../support/logs.js';

const PUSH = JSON.stringify({ ref: 'refs/heads/main', repository: { full_name: 'o/r' }, commits: [1] });

const waitFor = async (condition: () => boolean, what: string): Promise<void> => {
  for (let i = 0; i < 200; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
};

describe('idempotent deliveries (X-Forge-Delivery)', () => {
  it('a redelivery runs the handler once and gets the first body again', async () => {
    const server = await startReceiver({ secret: SECRET });
    const seen: string[] = [];
    server.receiver.on('push', (d) => void seen.push(d.id));
    try {
      const first = await deliver(server.url, 'push', PUSH, { 'x-forge-delivery': 'abc-1' });
      const second = await deliver(server.url, 'push', PUSH, { 'x-forge-delivery': 'abc-1' });
      expect(first.status).to.equal(200);
      expect(second.status).to.equal(200);
      expect(second.text).to.equal(first.text);
      // Subscribers run after the response: wait for the first run, then give a second one time to show.
      await waitFor(() => seen.length > 0, 'the handler');
      await new Promise((r) => setTimeout(r, 50));
      expect(seen).to.deep.equal(['abc-1']);
    } finally {
      await server.close();
    }
  });

  it('concurrent deliveries with one id run the handler once', async () => {
    const server = await startReceiver({ secret: SECRET });
    let runs = 0;
    server.receiver.on('*', () => void runs++);
    try {
      const replies = await Promise.all(
        Array.from({ length: 20 }, () => deliver(server.url, 'push', PUSH, { 'x-forge-delivery': 'same' })),
      );
      expect(replies.map((r) => r.status)).to.deep.equal(Array(20).fill(200));
      expect(new Set(replies.map((r) => r.text)).size).to.equal(1);
      await waitFor(() => runs > 0, 'the handler');
      await new Promise((r) => setTimeout(r, 50));
      expect(runs).to.equal(1);
    } finally {
      await server.close();
    }
  });

  it('different ids, or no id, run every time', async () => {
    const server = await startReceiver({ secret: SECRET });
    let runs = 0;
    server.receiver.on('push', () => void runs++);
    try {
      await deliver(server.url, 'push', PUSH, { 'x-forge-delivery': 'a' });
      await deliver(server.url, 'push', PUSH, { 'x-forge-delivery': 'b' });
      await deliver(server.url, 'push', PUSH);
      await deliver(server.url, 'push', PUSH);
      await waitFor(() => runs === 4, '4 runs');
    } finally {
      await server.close();
    }
  });

  it('the same id with a different payload is a 409, not a replay', async () => {
    const server = await startReceiver({ secret: SECRET });
    try {
      expect((await deliver(server.url, 'push', PUSH, { 'x-forge-delivery': 'dup' })).status).to.equal(200);
      const other = await deliver(server.url, 'push', PUSH.replace('main', 'dev'), { 'x-forge-delivery': 'dup' });
      expect(other.status).to.equal(409);
      expect(other.json).to.deep.equal({ error: 'This X-Forge-Delivery id was already used for a different payload.' });
    } finally {
      await server.close();
    }
  });

  it('the same id and body under another event is a 409, not a replay', async () => {
    const server = await startReceiver({ secret: SECRET });
    try {
      expect((await deliver(server.url, 'push', PUSH, { 'x-forge-delivery': 'ev' })).status).to.equal(200);
      expect((await deliver(server.url, 'issues', PUSH, { 'x-forge-delivery': 'ev' })).status).to.equal(409);
    } finally {
      await server.close();
    }
  });

  it('an unsigned or invalid redelivery is still refused (dedupe never skips verification)', async () => {
    const server = await startReceiver({ secret: SECRET });
    try {
      await deliver(server.url, 'push', PUSH, { 'x-forge-delivery': 'v' });
      const forged = await deliver(server.url, 'push', PUSH, {
        'x-forge-delivery': 'v',
        'x-forge-signature-256': `sha256=${'0'.repeat(64)}`,
      });
      expect(forged.status).to.equal(401);
    } finally {
      await server.close();
    }
  });

  it('ids are forgotten after the window', async () => {
    let now = 1_000_000;
    const server = await startReceiver({ secret: SECRET, deliveryWindowMs: 60_000, now: () => now });
    let runs = 0;
    server.receiver.on('push', () => void runs++);
    try {
      await deliver(server.url, 'push', PUSH, { 'x-forge-delivery': 'w' });
      now += 59_000;
      await deliver(server.url, 'push', PUSH, { 'x-forge-delivery': 'w' });
      now += 2_000;
      await deliver(server.url, 'push', PUSH, { 'x-forge-delivery': 'w' });
      await waitFor(() => runs === 2, '2 runs');
    } finally {
      await server.close();
    }
  });

  it('the log is bounded: the oldest ids are forgotten first', async () => {
    const log = new DeliveryLog<number>(60_000, 3);
    let runs = 0;
    for (const id of ['a', 'b', 'c', 'd']) await log.run(id, 'x', () => ++runs);
    expect(log.size).to.equal(3);
    expect((await log.run('d', 'x', () => ++runs)).kind).to.equal('duplicate');
    expect((await log.run('a', 'x', () => ++runs)).kind).to.equal('first');
    expect(runs).to.equal(5);
  });

  it('a handler failure is not remembered, so a retry runs again', async () => {
    const log = new DeliveryLog<string>(60_000, 10);
    let fail = true;
    const handler = () => {
      if (fail) throw new Error('boom');
      return 'ok';
    };
    await log.run('x', 'd', handler).then(
      () => expect.fail('should reject'),
      (e: Error) => expect(e.message).to.equal('boom'),
    );
    fail = false;
    expect(await log.run('x', 'd', handler)).to.deep.equal({ kind: 'first', value: 'ok' });
  });
});

describe('subscribers run after the response', () => {
  it('are held until the adapter reports the response sent', async () => {
    const { WebhookReceiver } = await import('../../src/webhook/receiver.js');
    const { createLogger } = await import('../../src/logging.js');
    const { Readable } = await import('node:stream');
    const { sign } = await import('../support/http.js');
    const receiver = new WebhookReceiver({ secret: SECRET, env: {}, logger: createLogger('silent') });
    const seen: string[] = [];
    receiver.on('push', (delivery) => void seen.push((delivery.payload.repository as { full_name: string }).full_name));
    const response = await receiver.handle({
      method: 'POST',
      headers: { 'x-forge-event': 'push', 'x-forge-signature-256': sign(PUSH), 'content-type': 'application/json' },
      body: Readable.from([Buffer.from(PUSH)]),
    });
    expect(response.status).to.equal(200);
    await new Promise((r) => setImmediate(r));
    expect(seen, 'not before the response is sent').to.deep.equal([]);
    response.afterResponse!();
    await waitFor(() => seen.length === 1, 'subscriber');
    expect(seen).to.deep.equal(['o/r']);
  });

  it('receive the delivery over HTTP once the answer is out', async () => {
    const server = await startReceiver({ secret: SECRET });
    const seen: Array<[string, string]> = [];
    server.receiver.on('push', async (delivery) => void seen.push([delivery.id, delivery.event]));
    try {
      const reply = await deliver(server.url, 'push', PUSH, { 'x-forge-delivery': 's1' });
      expect(reply.status).to.equal(200);
      await waitFor(() => seen.length === 1, 'subscriber');
      expect(seen).to.deep.equal([['s1', 'push']]);
    } finally {
      await server.close();
    }
  });

  it('a slow subscriber does not delay the response', async () => {
    const server = await startReceiver({ secret: SECRET });
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    let finished = false;
    server.receiver.on('push', async () => {
      await blocked;
      finished = true;
    });
    try {
      const reply = await deliver(server.url, 'push', PUSH);
      expect(reply.status).to.equal(200);
      expect(finished).to.equal(false);
      release();
      await waitFor(() => finished, 'slow subscriber');
    } finally {
      await server.close();
    }
  });

  it('a throwing or rejecting subscriber is logged and changes nothing', async () => {
    const capture = capturingLogger();
    const server = await startReceiver({ secret: SECRET, logger: capture.logger });
    let third = 0;
    server.receiver.on('push', () => {
      throw new Error('sync failure');
    });
    server.receiver.on('push', async () => {
      throw new Error('async failure');
    });
    server.receiver.on('*', () => void third++);
    try {
      const reply = await deliver(server.url, 'push', PUSH);
      expect(reply.status).to.equal(200);
      await waitFor(
        () => capture.lines().filter((l) => l.msg === 'webhook subscriber failed').length === 2,
        'two error logs',
      );
      expect(third).to.equal(1);
      const messages = capture
        .lines()
        .filter((l) => l.msg === 'webhook subscriber failed')
        .map((l) => (l.err as { message: string }).message);
      expect(messages.sort()).to.deep.equal(['async failure', 'sync failure']);
    } finally {
      await server.close();
    }
  });

  it('unsubscribing stops delivery; rejected deliveries reach no subscriber', async () => {
    const server = await startReceiver({ secret: SECRET });
    let runs = 0;
    const off = server.receiver.on('*', () => void runs++);
    try {
      await deliver(server.url, 'push', '[]'); // 400
      await deliver(server.url, 'push', PUSH, { 'x-forge-signature-256': 'sha256=bad' }); // 401
      off();
      await deliver(server.url, 'push', PUSH);
      await new Promise((r) => setTimeout(r, 50));
      expect(runs).to.equal(0);
    } finally {
      await server.close();
    }
  });
});

describe('structured logs', () => {
  it('carry delivery id, event, status and duration; never the secret or the body', async () => {
    const capture = capturingLogger();
    const secret = 'super-secret-value-7f3a';
    const server = await startReceiver({ secret, logger: capture.logger });
    const body = JSON.stringify({ ref: 'refs/heads/body-marker-91c2', commits: [] });
    try {
      const { request, sign } = await import('../support/http.js');
      await request(server.url, {
        headers: {
          'x-forge-event': 'push',
          'x-forge-delivery': 'd-42',
          'x-forge-signature-256': sign(body, secret),
          'content-type': 'application/json',
        },
        body,
      });
      await request(server.url, {
        headers: { 'x-forge-event': 'push', 'x-forge-delivery': 'd-43', 'x-forge-signature-256': sign(body, 'wrong') },
        body,
      });
      await request(server.url, {
        headers: { 'x-forge-event': 'push', 'x-forge-delivery': 'd-44', 'x-forge-signature-256': sign('[1]', secret) },
        body: '[1]',
      });
      const lines = capture.lines().filter((l) => typeof l.status === 'number');
      expect(lines.map((l) => [l.deliveryId, l.event, l.status])).to.deep.equal([
        ['d-42', 'push', 200],
        ['d-43', 'push', 401],
        ['d-44', 'push', 400],
      ]);
      for (const line of lines) expect(line.durationMs).to.be.a('number').and.at.least(0);
      expect(lines[1]).to.include({ reason: 'signature mismatch' });
      expect(capture.raw()).not.to.contain(secret);
      expect(capture.raw()).not.to.contain('body-marker-91c2');
      expect(capture.raw()).not.to.contain(sign(body, secret).slice(7));
    } finally {
      await server.close();
    }
  });

  it('bound caller-supplied ids in the logs', async () => {
    const capture = capturingLogger();
    const server = await startReceiver({ secret: SECRET, logger: capture.logger });
    try {
      await deliver(server.url, 'x'.repeat(4000), '{}', { 'x-forge-delivery': 'y'.repeat(4000) });
      const line = capture.lines().find((l) => l.status === 200)!;
      expect((line.event as string).length).to.be.below(200);
      expect((line.deliveryId as string).length).to.be.below(200);
    } finally {
      await server.close();
    }
  });
});
