// A graceful stop (Listening.drain): requests in progress finish, nothing new is accepted, and
// what is still open after the grace period is closed.
import http from 'node:http';
import net from 'node:net';

import { expect } from 'chai';

import { deferContinue } from '../../src/sidecar/expect-continue.js';
import { listenEarly, type Listening } from '../../src/sidecar/listen.js';
import { rawConnection } from '../support/raw-http.js';

/** Port of a listening URL. */
function portOf(url: string): number {
  return Number(new URL(url).port);
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('graceful stop (drain)', () => {
  let listening: Listening;
  let release: (() => void) | undefined;
  /** /slow answers when the test says so; everything else once its body has been read. */
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (req.url === '/slow') release = () => res.end('slow');
    else req.resume().on('end', () => res.end('quick'));
  };
  beforeEach(async () => {
    listening = await listenEarly('127.0.0.1', 0);
    listening.server.on('request', handler);
  });
  afterEach(async () => {
    release = undefined;
    if (listening.server.listening) await listening.close();
  });

  it('a request in progress finishes; its connection and idle keep-alive ones close; new connections are refused', async () => {
    const busy = rawConnection(listening.url);
    busy.socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    const idle = rawConnection(listening.url);
    idle.socket.write('GET /quick HTTP/1.1\r\nHost: x\r\n\r\n');
    while (release === undefined) await new Promise((r) => setTimeout(r, 10));
    const drained = listening.drain(5_000);
    // The idle keep-alive connection got its answer and is closed by the drain.
    expect(await idle.received).to.match(/^HTTP\/1\.1 200 [\s\S]*quick$/);
    expect(await connects(portOf(listening.url))).to.equal(false);
    release();
    const answer = await busy.received;
    expect(answer).to.match(/^HTTP\/1\.1 200 [\s\S]*slow$/);
    expect(await drained).to.equal(true);
  });

  /** A connection whose GET /slow the handler is holding. */
  async function slowRequestInProgress(): Promise<ReturnType<typeof rawConnection>> {
    const connection = rawConnection(listening.url);
    connection.socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    while (release === undefined) await new Promise((r) => setTimeout(r, 10));
    return connection;
  }

  /**
   * `next` pipelined behind a held /slow, so that it is parsed only after the drain began; then /slow
   * is let go. Checks that both were answered, the second (/quick) with Connection: close, and that
   * the drain finished; resolves with everything the connection received.
   */
  async function pipelinedDuringDrain(next: string): Promise<string> {
    const { socket, received } = await slowRequestInProgress();
    const drained = listening.drain(5_000);
    socket.write(next);
    release!();
    const answers = await received;
    expect(answers.match(/HTTP\/1\.1 200 /g)).to.have.length(2);
    const second = answers.slice(answers.lastIndexOf('HTTP/1.1 200 '));
    expect(second)
      .to.match(/\r\nConnection: close\r\n/i)
      .and.to.match(/quick$/);
    expect(await drained).to.equal(true);
    return answers;
  }

  it('a request that arrives on a kept-alive connection during the drain is answered with Connection: close', async () => {
    await pipelinedDuringDrain('GET /quick HTTP/1.1\r\nHost: x\r\n\r\n');
  });

  for (const deferred of [true, false]) {
    it(`a request that expects a 100 Continue, arriving during the drain, is answered with Connection: close (${deferred ? "gatehouse's deferred 100" : "node's own 100"})`, async () => {
      if (deferred) listening.server.on('checkContinue', deferContinue(handler));
      const answers = await pipelinedDuringDrain(
        'POST /quick HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\nhi',
      );
      expect(answers).to.contain('HTTP/1.1 100 Continue\r\n\r\n');
    });
  }

  it('after the grace period, connections still busy are closed and the drain says so', async () => {
    const { received } = await slowRequestInProgress();
    expect(await listening.drain(300)).to.equal(false);
    // Closed without an answer.
    expect(await received).to.equal('');
  });
});
