// A client that reads the app's answer too slowly (a byte now and then, or not
// at all) cannot hold a connection to the app for as long as the answer lasts:
// once what waits for it is not read within the grace period plus its size at
// the minimum rate, its connection is closed and the app's request with it.
// A client that reads at any reasonable pace gets the whole answer.
import http from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';

import { expect } from 'chai';

import { rawConnection } from '../support/raw-http.js';
import { startDeployment, type Deployment } from '../support/sign-in.js';

const ANSWER_BYTES = 8 * 1024 * 1024;

describe('slow readers', function () {
  this.timeout(30_000);
  let deployment: Deployment;
  const appAnswers: Array<'finished' | 'cut'> = [];

  before(async () => {
    deployment = await startDeployment({
      // A fast minimum, so that a test need not wait a minute: 256 KB/s, after 300 ms.
      downloadRate: { bytesPerSecond: 256 * 1024, graceMs: 300 },
      upstreamHandler: (_req: http.IncomingMessage, res: http.ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(ANSWER_BYTES) });
        res.on('close', () => appAnswers.push(res.writableFinished ? 'finished' : 'cut'));
        const block = Buffer.alloc(64 * 1024, 0x61);
        let sent = 0;
        const pump = (): void => {
          while (sent < ANSWER_BYTES) {
            sent += block.length;
            if (!res.write(block)) return void res.once('drain', pump);
          }
          res.end();
        };
        pump();
      },
    });
  });
  after(() => deployment.close());

  const request = () => `GET /public/big HTTP/1.1\r\nHost: ${new URL(deployment.url).host}\r\n\r\n`;

  it('a client that stops reading is disconnected after the grace period plus what waits at the minimum rate; the app sees its answer cut', async () => {
    const { socket, received } = rawConnection(deployment.url);
    socket.write(request());
    socket.pause(); // reads nothing more: the kernel's buffers fill, then gatehouse's
    const started = Date.now();
    for (let i = 0; i < 300 && !appAnswers.includes('cut'); i++) await delay(20);
    expect(appAnswers).to.include('cut');
    expect(Date.now() - started).to.be.below(6_000);
    socket.resume();
    const got = await received;
    expect(got.length).to.be.below(ANSWER_BYTES); // the connection was closed before the whole answer
  });

  it('a client that reads steadily gets the whole answer', async () => {
    const before = appAnswers.filter((a) => a === 'finished').length;
    const { socket, received } = rawConnection(deployment.url);
    socket.write(request().replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'));
    const got = await received;
    expect(got).to.match(/^HTTP\/1\.1 200 /);
    expect(got.length - got.indexOf('\r\n\r\n') - 4).to.equal(ANSWER_BYTES);
    expect(appAnswers.filter((a) => a === 'finished').length).to.equal(before + 1);
  });
});
