// Clients that start requests and leave them: each frees its connection to the app at once, the
// connections and the queue in front of them are bounded (503 with Retry-After when full), and
// everyone else keeps being served.
import http from 'node:http';
import net from 'node:net';

import { expect } from 'chai';

import { startDeployment, type Deployment } from '../support/sign-in.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens a connection, writes `bytes`, and resolves once they are written (the connection stays open). */
function begin(url: string, bytes: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1', () =>
      socket.write(bytes, () => resolve(socket)),
    );
    socket.on('error', reject);
  });
}

/** Waits until `condition` holds, checking every 20 ms, for at most `ms`; false if it never did. */
async function eventually(condition: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await pause(20)) if (condition()) return true;
  return condition();
}

/** A GET answered within `ms`, or null. */
function answeredWithin(url: string, ms: number): Promise<number | null> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false, timeout: ms }, (res) => {
      res.resume();
      resolve(res.statusCode ?? null);
    });
    request.on('timeout', () => {
      request.destroy();
      resolve(null);
    });
    request.on('error', () => resolve(null));
  });
}

describe('abandoned requests and the bounded upstream pool', function () {
  this.timeout(60_000);
  let deployment: Deployment;
  /** Requests the app has begun and not finished (it waits for whole bodies, and never answers /public/hang). */
  let open = 0;
  before(async () => {
    deployment = await startDeployment({
      upstreamConnections: 16,
      upstreamQueue: 16,
      upstreamHandler: (req, res) => {
        open += 1;
        res.once('close', () => (open -= 1));
        if (req.url?.startsWith('/public/hang')) return;
        req.resume().on('end', () => res.end('ok'));
      },
    });
  });
  after(() => deployment.close());

  it('1000 requests abandoned at once (bodies begun, or waiting on the app) free their connections; a legitimate request is answered within 1 s', async () => {
    const host = new URL(deployment.url).host;
    const sockets = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        begin(
          deployment.url,
          i % 2 === 0
            ? `POST /public/x HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 100000\r\n\r\nx`
            : `GET /public/hang/${i} HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
        ),
      ),
    );
    // The pool is full: the first 32 in flight (16 on connections, 16 waiting), the rest answered 503 at once.
    expect(
      await eventually(() => deployment.gateway.forwarder.inFlight === 32, 5_000),
      `in flight: ${deployment.gateway.forwarder.inFlight}`,
    ).to.equal(true);
    const refused = await answeredWithin(`${deployment.url}/public/while-full`, 1_000);
    expect(refused).to.equal(503);
    for (const socket of sockets) socket.destroy();
    expect(
      await eventually(() => deployment.gateway.forwarder.inFlight === 0 && open === 0, 1_000),
      `in flight ${deployment.gateway.forwarder.inFlight}, open at the app ${open}`,
    ).to.equal(true);
    expect(await answeredWithin(`${deployment.url}/public/after`, 1_000)).to.equal(200);
  });

  it('the 503 for a full pool says when to come back, as JSON to an API caller and a page to a browser', async () => {
    const host = new URL(deployment.url).host;
    const sockets = await Promise.all(
      Array.from({ length: 32 }, (_, i) =>
        begin(deployment.url, `GET /public/hang/full-${i} HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
      ),
    );
    try {
      expect(await eventually(() => deployment.gateway.forwarder.inFlight === 32, 5_000)).to.equal(true);
      const api = await fetch(`${deployment.url}/public/api`, { headers: { accept: 'application/json' } });
      expect(api.status).to.equal(503);
      expect(api.headers.get('retry-after')).to.equal('1');
      expect(await api.json()).to.deep.equal({ error: 'The application is busy with too many requests right now.' });
      const page = await fetch(`${deployment.url}/public/page`, { headers: { accept: 'text/html' } });
      expect(page.status).to.equal(503);
      expect(page.headers.get('retry-after')).to.equal('1');
      expect(await page.text()).to.contain('503 Service Unavailable');
    } finally {
      for (const socket of sockets) socket.destroy();
    }
    expect(await eventually(() => deployment.gateway.forwarder.inFlight === 0, 1_000)).to.equal(true);
  });

  it('a client that leaves a GET the app is still working on: the app sees its request closed at once', async () => {
    const host = new URL(deployment.url).host;
    const socket = await begin(deployment.url, `GET /public/hang/one HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    expect(await eventually(() => open === 1, 2_000)).to.equal(true);
    socket.destroy();
    expect(await eventually(() => open === 0, 1_000)).to.equal(true);
  });

  it('uploads whose body never begins (with or without Expect: 100-continue) take no connection to the app and no place in the bound', async () => {
    const host = new URL(deployment.url).host;
    const sockets = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        begin(
          deployment.url,
          `POST /public/x HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 10\r\n${i % 2 ? 'Expect: 100-continue\r\n' : ''}\r\n`,
        ),
      ),
    );
    try {
      await pause(200);
      expect(deployment.gateway.forwarder.inFlight).to.equal(0);
      expect(open, 'none reached the app').to.equal(0);
      expect(await answeredWithin(`${deployment.url}/public/meanwhile`, 1_000)).to.equal(200);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it('an upload dripped a byte at a time (never silent long enough to time out) is refused 408 once its grace is over, freeing its place', async () => {
    const host = new URL(deployment.url).host;
    const socket = await begin(
      deployment.url,
      `POST /public/drip HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 100000\r\n\r\nx`,
    );
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    expect(await eventually(() => deployment.gateway.forwarder.inFlight === 1, 2_000)).to.equal(true);
    const started = Date.now();
    const drip = setInterval(() => {
      if (!socket.destroyed) socket.write('x');
    }, 250);
    try {
      await Promise.race([closed, pause(10_000)]);
    } finally {
      clearInterval(drip);
      socket.destroy();
    }
    expect(received).to.match(/^HTTP\/1\.1 408 /);
    // Not before the grace period, and long before the 60 s the app may stay silent.
    expect(Date.now() - started).to.be.within(4_000, 8_000);
    expect(await eventually(() => deployment.gateway.forwarder.inFlight === 0 && open === 0, 1_000)).to.equal(true);
  });

  it('memory stays bounded over rounds of abandoned requests', async () => {
    const host = new URL(deployment.url).host;
    const round = async () => {
      const sockets = await Promise.all(
        Array.from({ length: 200 }, () =>
          begin(
            deployment.url,
            `POST /public/x HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 100000\r\n\r\n${'x'.repeat(1000)}`,
          ),
        ),
      );
      for (const socket of sockets) socket.destroy();
      await eventually(() => deployment.gateway.forwarder.inFlight === 0, 2_000);
    };
    await round();
    global.gc?.();
    const before = process.memoryUsage().rss;
    for (let i = 0; i < 5; i++) await round();
    global.gc?.();
    const grown = process.memoryUsage().rss - before;
    expect(grown, `RSS grew ${grown} bytes`).to.be.below(64 * 1024 * 1024);
    expect(await answeredWithin(`${deployment.url}/public/after`, 1_000)).to.equal(200);
  });
});
