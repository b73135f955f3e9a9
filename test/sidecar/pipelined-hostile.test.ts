// Hostile requests pipelined behind one still being answered: node hands each over while the
// answer before it is still being written, so every refusal gatehouse makes for them must wait
// its turn, and none may take the process down.
import { expect } from 'chai';

import { rawConnection, rawExchange } from '../support/raw-http.js';
import { startDeployment, type Deployment } from '../support/sign-in.js';

const UPSTREAM_TIMEOUT_MS = 1_500;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('hostile requests pipelined behind an answer in progress', function () {
  this.timeout(30_000);
  let deployment: Deployment;
  let host: string;
  /** Requests the app has begun and not finished. */
  let open = 0;
  before(async () => {
    deployment = await startDeployment({
      upstreamTimeoutMs: UPSTREAM_TIMEOUT_MS,
      upstreamHandler: (req, res) => {
        open += 1;
        res.once('close', () => (open -= 1));
        if (req.url === '/public/stream') {
          // An answer that takes a while (a download, server-sent events): a part every 400 ms for 2.4 s.
          res.writeHead(200, { 'content-type': 'text/plain' });
          let parts = 0;
          const timer = setInterval(() => {
            if (++parts < 6) res.write('streaming\n');
            else {
              clearInterval(timer);
              res.end('done\n');
            }
          }, 400);
          res.once('close', () => clearInterval(timer));
          return;
        }
        req.resume().on('end', () => res.end(`ok ${req.url}`));
      },
    });
    host = new URL(deployment.url).host;
  });
  after(() => deployment.close());

  async function stillServing(): Promise<void> {
    const after = await fetch(`${deployment.url}/public/after`);
    expect(after.status).to.equal(200);
    expect(await after.text()).to.equal('ok /public/after');
  }

  for (const upgrade of ['Connection: Upgrade\r\nUpgrade: h2c', 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==']) {
    it(`an upgrade (${upgrade.split('Upgrade: ')[1]!.split('\r')[0]}) behind a GET: the GET's answer whole, then a 400, and gatehouse keeps serving`, async () => {
      const { response, closed } = await rawExchange(deployment.url, [`GET /public/a HTTP/1.1\r\nHost: ${host}\r\n\r\nGET /public/b HTTP/1.1\r\nHost: ${host}\r\n${upgrade}\r\n\r\n`], 5_000);
      expect(closed).to.equal(true);
      expect(response).to.match(/^HTTP\/1\.1 200 [\s\S]*ok \/public\/a[\s\S]*HTTP\/1\.1 400 /);
      expect(response).to.contain('A protocol upgrade must be the only request in progress on its connection.');
      await stillServing();
    });
  }

  it('a stalled upload behind a long answer: its 408 waits its turn, and gatehouse keeps serving', async () => {
    const { response, closed } = await rawExchange(deployment.url, [`GET /public/stream HTTP/1.1\r\nHost: ${host}\r\n\r\nPOST /public/upload HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 10\r\n\r\nx`], 8_000);
    expect(closed).to.equal(true);
    expect(response).to.match(/^HTTP\/1\.1 200 [\s\S]*done\n[\s\S]*HTTP\/1\.1 408 /);
    await stillServing();
  });

  it('a body that fails to parse behind a GET: 400 after the GET is answered, the app request abandoned at once', async () => {
    const { socket, received } = rawConnection(deployment.url);
    socket.write(`GET /public/stream HTTP/1.1\r\nHost: ${host}\r\n\r\nPOST /public/b HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n`);
    // The POST has reached the app (its first chunk), then its next chunk size is not hex.
    for (let i = 0; i < 100 && open < 2; i++) await pause(10);
    socket.write('zz\r\n');
    for (let i = 0; i < 100 && open > 1; i++) await pause(10);
    expect(open, 'the POST is abandoned at the app at once').to.equal(1);
    const response = await received;
    expect(response).to.match(/^HTTP\/1\.1 200 [\s\S]*done\n[\s\S]*HTTP\/1\.1 400 /);
    expect(response).to.contain('{"error":"The request is not valid HTTP/1.1."}');
    await stillServing();
  });
});
