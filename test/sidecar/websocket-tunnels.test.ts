// Open WebSocket connections are bounded and timed: each holds a connection to
// the app of its own for as long as it is open, so past the bound a handshake
// gets 503, and one silent both ways for the app's timeout is closed (as nginx
// closes one after proxy_read_timeout). One that keeps talking stays open.
import { createHash } from 'node:crypto';
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

import { expect } from 'chai';

import { startDeployment, type Deployment } from '../support/sign-in.js';

const IDLE_MS = 600;

/** Opens a tunnel through gatehouse; resolves with the socket once the 101 is read. */
function openTunnel(deployment: Deployment, path = '/public/socket'): Promise<{ socket: net.Socket; head: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(deployment.url).port), '127.0.0.1', () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${new URL(deployment.url).host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAccept: application/json\r\n\r\n`,
      );
    });
    let head = '';
    const onData = (data: Buffer): void => {
      head += data.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      resolve({ socket, head });
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

const closed = (socket: net.Socket): Promise<void> =>
  socket.destroyed ? Promise.resolve() : new Promise((resolve) => socket.once('close', () => resolve()));

describe('WebSocket connections: bounded and timed', function () {
  this.timeout(20_000);
  let deployment: Deployment;
  let appSockets: net.Socket[];

  before(async () => {
    appSockets = [];
    deployment = await startDeployment({
      upstreamTimeoutMs: IDLE_MS,
      upstreamWebSockets: 2,
      // An app that accepts every WebSocket and echoes what it receives.
      upstreamSetup: (server) =>
        server.on('upgrade', (req, socket: net.Socket) => {
          appSockets.push(socket);
          const accept = createHash('sha1')
            .update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
            .digest('base64');
          socket.write(
            `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
          );
          socket.pipe(socket);
        }),
    });
  });
  after(() => deployment.close());

  it('one silent both ways for the app timeout is closed, at the app too; one that keeps talking stays open', async () => {
    const quiet = await openTunnel(deployment);
    const talking = await openTunnel(deployment);
    expect(quiet.head).to.match(/^HTTP\/1\.1 101 /);
    const started = Date.now();
    let echoed = '';
    talking.socket.on('data', (data: Buffer) => (echoed += data.toString()));
    // Talks every 200 ms, for longer than the idle limit.
    for (let i = 0; i < 8; i++) {
      talking.socket.write(`ping${i} `);
      await delay(200);
    }
    await closed(quiet.socket);
    expect(Date.now() - started).to.be.below(IDLE_MS * 4);
    expect(talking.socket.destroyed).to.equal(false);
    expect(echoed).to.include('ping7');
    expect(appSockets.filter((socket) => socket.destroyed).length).to.be.at.least(1);
    talking.socket.destroy();
  });

  it('past the bound, a handshake gets 503 with Retry-After; a place is free again once one closes', async () => {
    await delay(100); // the last test's tunnels are gone
    const first = await openTunnel(deployment);
    const second = await openTunnel(deployment);
    const third = await openTunnel(deployment);
    expect(third.head).to.match(/^HTTP\/1\.1 503 /);
    expect(third.head).to.match(/\r\nretry-after: 1\r\n/i);
    first.socket.destroy();
    await delay(100);
    const fourth = await openTunnel(deployment);
    expect(fourth.head).to.match(/^HTTP\/1\.1 101 /);
    for (const tunnel of [second, third, fourth]) tunnel.socket.destroy();
  });
});
