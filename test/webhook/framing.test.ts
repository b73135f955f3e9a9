// One request in, at most one delivery out, on the webhook path: whatever framing a sender uses,
// each delivery is verified over exactly the body it framed, a body that holds another request
// never becomes a second delivery, and a request that cannot be framed is refused with 400.
import { expect } from 'chai';
import fc from 'fast-check';

import { createLogger } from '../../src/logging.js';
import { startServer, type RunningServer } from '../../src/sidecar/server.js';
import type { Delivery } from '../../src/webhook/subscribers.js';
import { raw } from '../support/raw-http.js';
import { sign } from '../support/http.js';

const SECRET = 'framing secret';

function chunked(body: string, split: boolean, trailer: boolean): string {
  const parts = split && body.length > 1 ? [body.slice(0, body.length >> 1), body.slice(body.length >> 1)] : [body];
  return `${parts.map((p) => `${Buffer.byteLength(p, 'latin1').toString(16)}\r\n${p}\r\n`).join('')}0\r\n${trailer ? 'X-Forge-Event: push\r\n' : ''}\r\n`;
}

/** A signed delivery request; its body embeds a whole second delivery request as text. */
function delivery(
  id: string,
  framing: string,
  connection: string | undefined,
  expect100: boolean,
  last: boolean,
): { bytes: string; body: string } {
  const inner = JSON.stringify({ smuggled: true });
  const smuggled = `POST /api/forge/webhook HTTP/1.1\r\nHost: x\r\nX-Forge-Event: push\r\nX-Forge-Delivery: smuggled-${id}\r\nX-Forge-Signature-256: ${sign(inner, SECRET)}\r\nContent-Length: ${inner.length}\r\n\r\n${inner}`;
  const body = JSON.stringify({ id, text: smuggled });
  const head = [
    'POST /api/forge/webhook HTTP/1.1',
    'Host: x',
    'Content-Type: application/json',
    'X-Forge-Event: ping',
    `X-Forge-Delivery: ${id}`,
    `X-Forge-Signature-256: ${sign(body, SECRET)}`,
  ];
  if (connection !== undefined) head.push(`Connection: ${connection}`);
  else if (last) head.push('Connection: close');
  if (expect100) head.push('Expect: 100-continue');
  if (framing === 'length' || framing === 'both') head.push(`Content-Length: ${Buffer.byteLength(body, 'latin1')}`);
  if (framing !== 'length') head.push(`Transfer-Encoding: ${framing === 'CHUNKED' ? 'CHUNKED' : 'chunked'}`);
  const framed =
    framing === 'length' ? body : chunked(body, framing === 'chunked-split', framing === 'chunked-trailer');
  return { bytes: `${head.join('\r\n')}\r\n\r\n${framed}`, body };
}

describe('webhook request framing (smuggling)', function () {
  this.timeout(60_000);
  let server: RunningServer;
  const seen: Delivery[] = [];
  before(async () => {
    server = await startServer({ port: 0, logger: createLogger('silent'), webhook: { secret: SECRET } });
    server.receiver.on('*', (d) => void seen.push(d));
  });
  after(() => server.close());

  it('a delivery pipelined behind one refused with 413 (which closes the connection) is not processed, so its retry is', async () => {
    seen.length = 0;
    const big = `POST /api/forge/webhook HTTP/1.1\r\nHost: x\r\nX-Forge-Event: ping\r\nX-Forge-Signature-256: sha256=${'0'.repeat(64)}\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n{}`;
    const behind = delivery('behind-413', 'length', undefined, false, true);
    const response = await raw(server.url, big + behind.bytes);
    expect(response.match(/HTTP\/1\.1 \d{3} /g)).to.deep.equal(['HTTP/1.1 413 ']);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).to.deep.equal([]);
    // The sender retries it: processed now, not a duplicate of something nobody ever saw.
    const retried = await raw(server.url, behind.bytes);
    expect(retried).to.match(/^HTTP\/1\.1 200 /);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen.map((d) => d.id)).to.deep.equal(['behind-413']);
  });

  it('property: each delivery once, over exactly its framed body; never the one inside it; 400 when it cannot be framed', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('length', 'chunked', 'CHUNKED', 'chunked-split', 'chunked-trailer', 'both'),
        fc.constantFrom(
          undefined,
          'keep-alive',
          'content-length',
          'transfer-encoding',
          'keep-alive, Content-Length, Transfer-Encoding',
        ),
        fc.boolean(),
        async (framing, connection, expect100) => {
          seen.length = 0;
          const id = `d${n++}`;
          const first = delivery(id, framing, connection, expect100, false);
          const last = delivery(`${id}-last`, 'length', undefined, false, true);
          const response = await raw(server.url, first.bytes + last.bytes);
          // Subscribers run after the answer is out: give them their turn.
          await new Promise((resolve) => setTimeout(resolve, 20));
          const statuses = [...response.matchAll(/HTTP\/1\.1 (\d{3}) /g)]
            .map((m) => Number(m[1]))
            .filter((s) => s >= 200);
          expect(
            seen.map((d) => d.id),
            'never the smuggled delivery',
          ).not.to.include(`smuggled-${id}`);
          if (framing === 'both') {
            expect(statuses).to.deep.equal([400]);
            expect(seen).to.deep.equal([]);
            return;
          }
          expect(statuses).to.deep.equal([200, 200]);
          expect(seen.map((d) => d.id)).to.deep.equal([id, `${id}-last`]);
          expect(JSON.stringify(seen[0]!.payload)).to.equal(first.body);
        },
      ),
      { numRuns: 80 },
    );
  });
});
