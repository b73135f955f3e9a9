// An answer the app breaks off after it has begun cannot become a 502 or 504 any more: the
// client's connection is cut at once (as nginx does), so the client sees the answer fail instead
// of waiting on a half answer until its idle timeout, and the break is logged.
import http from 'node:http';

import { expect } from 'chai';

import { capturingLogger, type CapturedLogs } from '../support/logs.js';
import { rawConnection } from '../support/raw-http.js';
import { startDeployment, type Deployment } from '../support/sign-in.js';

/** How long the app may stall mid-answer; the client idle timeout is this plus 5 s. */
const UPSTREAM_TIMEOUT_MS = 2_000;
/** Above how long any of these cuts may take, below the client idle timeout: a connection still open after this was left hanging. */
const HANGING_MS = UPSTREAM_TIMEOUT_MS + 3_000;

describe('an answer the app breaks off', function () {
  this.timeout(30_000);
  let logs: CapturedLogs;
  let deployment: Deployment;
  before(async () => {
    logs = capturingLogger('info');
    deployment = await startDeployment({
      logger: logs.logger,
      upstreamTimeoutMs: UPSTREAM_TIMEOUT_MS,
      upstreamHandler: (req, res) => {
        const url = req.url ?? '';
        if (url.startsWith('/public/crash-chunked')) {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('the first part\n');
          setTimeout(() => res.socket?.destroy(), 100);
        } else if (url.startsWith('/public/crash-sized')) {
          res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' });
          res.write('ten bytes\n');
          setTimeout(() => res.socket?.destroy(), 100);
        } else if (url.startsWith('/public/stall')) {
          // Begins, then says nothing more: past the upstream timeout.
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('the first part\n');
        } else {
          res.writeHead(200, { 'content-type': 'text/plain' }).end('whole');
        }
      },
    });
  });
  after(() => deployment.close());

  /** Sends a GET on a kept-alive connection: what arrived, and whether gatehouse closed the connection within HANGING_MS. */
  async function fetchRaw(path: string): Promise<{ received: string; closed: boolean }> {
    const { socket, received } = rawConnection(deployment.url);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${new URL(deployment.url).host}\r\n\r\n`);
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      received.then((text) => ({ received: text, closed: true })),
      new Promise<{ received: string; closed: boolean }>(
        (resolve) => (timer = setTimeout(() => resolve({ received: '', closed: false }), HANGING_MS)),
      ),
    ]);
    clearTimeout(timer);
    socket.destroy();
    return outcome;
  }

  for (const [name, path] of [
    ['a chunked answer the app crashes in', '/public/crash-chunked'],
    ['an answer shorter than its Content-Length', '/public/crash-sized'],
    ['an answer the app stops sending past the upstream timeout', '/public/stall'],
  ] as const) {
    it(`${name}: the client's connection is cut, the answer visibly not whole, and logged`, async () => {
      let outcome = { received: '', closed: false };
      const lines = await logs.during(async () => (outcome = await fetchRaw(path)));
      const { received, closed } = outcome;
      expect(closed, 'the connection was left open').to.equal(true);
      expect(received).to.match(/^HTTP\/1\.1 200 /);
      // Never made to look whole: no last chunk, or fewer bytes than announced.
      expect(received).not.to.match(/\r\n0\r\n\r\n$/);
      if (path.includes('sized')) expect(received.slice(received.indexOf('\r\n\r\n') + 4)).to.equal('ten bytes\n');
      const line = lines.find((l) => l.msg === 'upstream request failed');
      expect(line).to.include({ path, reason: 'the app broke off its answer' });
    });
  }

  it('a whole answer keeps its connection (the cut is only for broken ones)', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const get = () =>
        new Promise<{ body: string; port: number }>((resolve, reject) => {
          http
            .get(`${deployment.url}/public/whole`, { agent }, (res) => {
              const port = res.socket.localPort ?? 0;
              let body = '';
              res.on('data', (d: Buffer) => (body += d.toString()));
              res.on('end', () => resolve({ body, port }));
            })
            .on('error', reject);
        });
      const first = await get();
      const second = await get();
      expect([first.body, second.body]).to.deep.equal(['whole', 'whole']);
      expect(second.port, 'the same connection').to.equal(first.port);
    } finally {
      agent.destroy();
    }
  });
});
