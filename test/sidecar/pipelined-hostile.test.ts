// Hostile requests pipelined behind one still being answered: node hands each over while the
// answer before it is still being written, so every refusal gatehouse makes for them must wait
// its turn, and none may take the process down.
import { expect } from 'chai';

import { raw, rawConnection, rawExchange } from '../support/raw-http.js';
import { startDeployment, type Deployment } from '../support/sign-in.js';

const UPSTREAM_TIMEOUT_MS = 1_500;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('hostile requests pipelined behind an answer in progress', function () {
  this.timeout(30_000);
  let deployment: Deployment;
  let host: string;
  /** Requests the app has begun and not finished. */
  let open = 0;
  /** Requests the app has read whole, in order. */
  const seen: string[] = [];
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
        if (req.url === '/public/not-modified') {
          // A 304 may name the length of what it stands for (RFC 9110 §8.6); it has no body.
          res.writeHead(304, { etag: '"v1"', 'content-length': '1234' }).end();
          return;
        }
        if (req.url === '/public/early') {
          // Answers at once, without reading the upload.
          res.end('early');
          return;
        }
        req.resume().on('end', () => {
          seen.push(`${req.method} ${req.url}`);
          res.end(`ok ${req.url}`);
        });
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

  for (const upgrade of [
    'Connection: Upgrade\r\nUpgrade: h2c',
    'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
  ]) {
    it(`an upgrade (${upgrade.split('Upgrade: ')[1]!.split('\r')[0]}) behind a GET: the GET's answer whole, then a 400, and gatehouse keeps serving`, async () => {
      const { response, closed } = await rawExchange(
        deployment.url,
        [
          `GET /public/a HTTP/1.1\r\nHost: ${host}\r\n\r\nGET /public/b HTTP/1.1\r\nHost: ${host}\r\n${upgrade}\r\n\r\n`,
        ],
        5_000,
      );
      expect(closed).to.equal(true);
      expect(response).to.match(/^HTTP\/1\.1 200 [\s\S]*ok \/public\/a[\s\S]*HTTP\/1\.1 400 /);
      expect(response).to.contain('A protocol upgrade must be the only request in progress on its connection.');
      await stillServing();
    });
  }

  it('a stalled upload behind a long answer: its 408 waits its turn, and gatehouse keeps serving', async () => {
    const { response, closed } = await rawExchange(
      deployment.url,
      [
        `GET /public/stream HTTP/1.1\r\nHost: ${host}\r\n\r\nPOST /public/upload HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 10\r\n\r\nx`,
      ],
      8_000,
    );
    expect(closed).to.equal(true);
    expect(response).to.match(/^HTTP\/1\.1 200 [\s\S]*done\n[\s\S]*HTTP\/1\.1 408 /);
    await stillServing();
  });

  for (const [what, first] of [
    [
      'a 400 for a target naming another host',
      (h: string) => `GET http://evil.example/x HTTP/1.1\r\nHost: ${h}\r\n\r\n`,
    ],
    [
      'a 501 for a gzip transfer coding',
      (h: string) =>
        `POST /public/x HTTP/1.1\r\nHost: ${h}\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
    ],
    [
      'an answer to a client that announced a body it never sent',
      (h: string) => `GET /public/a HTTP/1.1\r\nHost: ${h}\r\nExpect: 100-continue\r\n\r\n`,
    ],
  ] as const) {
    it(`a request pipelined behind ${what} (which closes the connection) never reaches the app`, async () => {
      seen.length = 0;
      const { response, closed } = await rawExchange(
        deployment.url,
        [`${first(host)}POST /public/side-effect HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 4\r\n\r\nBUY!`],
        3_000,
      );
      expect(closed).to.equal(true);
      expect(response.match(/HTTP\/1\.1 [2-5]\d\d /g), 'one answer').to.have.length(1);
      await pause(100);
      expect(seen).not.to.include('POST /public/side-effect');
    });
  }

  it('a 304 that names a Content-Length reaches the client whole, and the connection goes on', async () => {
    const response = await raw(
      deployment.url,
      `GET /public/not-modified HTTP/1.1\r\nHost: ${host}\r\n\r\nGET /public/next HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
    );
    expect(response).to.match(/^HTTP\/1\.1 304 [\s\S]*etag: "v1"[\s\S]*HTTP\/1\.1 200 [\s\S]*ok \/public\/next$/i);
  });

  it('an app that answers before reading an upload: the client gets the answer, and the connection closes gracefully behind it', async () => {
    const { socket, received } = rawConnection(deployment.url);
    let reset: string | undefined;
    socket.on('error', (error: NodeJS.ErrnoException) => (reset ??= error.code));
    socket.write(`POST /public/early HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 200000\r\n\r\n${'x'.repeat(1000)}`);
    let answered = false;
    socket.once('data', () => (answered = true));
    for (let i = 0; i < 100 && !answered; i++) {
      socket.write('x'.repeat(1000));
      await pause(10);
    }
    socket.end();
    const response = await received;
    expect(reset).to.equal(undefined);
    expect(response).to.match(/^HTTP\/1\.1 200 [\s\S]*\r\nconnection: close\r\n[\s\S]*early$/i);
    await stillServing();
  });

  it('CONNECT behind a GET: the GET is answered whole first, then the 400', async () => {
    const { response, closed } = await rawExchange(
      deployment.url,
      [`GET /public/a HTTP/1.1\r\nHost: ${host}\r\n\r\nCONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n`],
      3_000,
    );
    expect(closed).to.equal(true);
    expect(response).to.match(
      /^HTTP\/1\.1 200 [\s\S]*ok \/public\/a[\s\S]*HTTP\/1\.1 400 [\s\S]*CONNECT is not supported/,
    );
    await stillServing();
  });

  it('thousands of requests pipelined behind a long answer: the long answer and the 32 waiting are answered, the last with Connection: close, then the connection closes', async () => {
    seen.length = 0;
    const { socket, received } = rawConnection(deployment.url);
    socket.on('error', () => {});
    const tiny = `GET /public/q HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
    socket.write(`GET /public/stream HTTP/1.1\r\nHost: ${host}\r\n\r\n${tiny.repeat(5_000)}`);
    const closed = await Promise.race([received.then(() => true), pause(10_000).then(() => false)]);
    socket.destroy();
    expect(closed, 'closed by gatehouse').to.equal(true);
    const response = await received;
    expect(response).to.match(/^HTTP\/1\.1 200 [\s\S]*done\n/);
    expect(response.match(/ok \/public\/q/g)).to.have.length(32);
    expect(response.match(/\r\nConnection: close\r\n/gi)).to.have.length(1);
    expect(response).to.match(/\r\nConnection: close\r\n[^]*ok \/public\/q$/i);
    expect(seen.filter((r) => r === 'GET /public/q').length).to.equal(32);
    await stillServing();
  });

  for (const [what, first, status] of [
    ['a refusal', (h: string) => `GET http://evil.example/protected HTTP/1.1\r\nHost: ${h}\r\n\r\nGARBAGE `, 400],
    [
      'an answer to Connection: close',
      (h: string) => `GET /public/a HTTP/1.1\r\nHost: ${h}\r\nConnection: close\r\n\r\n`,
      200,
    ],
  ] as const) {
    it(`${what} followed by bytes that cannot be parsed, while the client keeps sending and reads late: the client reads the answer, no reset`, async () => {
      const { socket, received } = rawConnection(deployment.url);
      let reset: string | undefined;
      socket.on('error', (error: NodeJS.ErrnoException) => (reset ??= error.code));
      // Reads nothing until it has sent for a second (within the 2 s linger): a reset in between would discard the answer.
      socket.pause();
      socket.write(first(host));
      for (let i = 0; i < 20 && !socket.destroyed; i++) {
        socket.write('x'.repeat(16 * 1024));
        await pause(50);
      }
      socket.resume();
      socket.end();
      const response = await received;
      expect(reset).to.equal(undefined);
      expect(response).to.match(new RegExp(`^HTTP/1\\.1 ${status} `));
    });
  }

  it('an upload that bursts, then trickles: refused 408 once the last upstream timeout saw too little, not after the burst has paid for minutes', async () => {
    const { socket, received } = rawConnection(deployment.url);
    socket.on('error', () => {});
    socket.write(
      `POST /public/upload HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 1000000\r\n\r\n${'a'.repeat(5_000)}`,
    );
    const started = Date.now();
    // A byte every 300 ms: never silent for the 1.5 s timeout; the whole upload's average stays
    // above 240 bytes a second for about 20 s thanks to the burst.
    const trickle = setInterval(() => {
      if (!socket.destroyed) socket.write('a');
    }, 300);
    try {
      const response = await Promise.race([received, pause(8_000).then(() => 'still open')]);
      expect(response).to.match(/^HTTP\/1\.1 408 /);
      expect(Date.now() - started).to.be.below(6_000);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  });

  it('a body that fails to parse behind a GET: 400 after the GET is answered, the app request abandoned at once', async () => {
    const { socket, received } = rawConnection(deployment.url);
    socket.write(
      `GET /public/stream HTTP/1.1\r\nHost: ${host}\r\n\r\nPOST /public/b HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n`,
    );
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
