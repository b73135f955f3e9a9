// The app's connection-specific response headers stay on the app's hop: the
// client gets gatehouse's own connection handling, and a field the app's
// Connection header names (a private one, say) never reaches the client.
import { expect } from 'chai';

import { raw } from '../support/raw-http.js';
import { startDeployment, type Deployment } from '../support/sign-in.js';

/** A kept-alive answer is complete once its chunked body ends (the connection stays open). */
const chunkedBodyEnded = (received: string) => received.endsWith('\r\n0\r\n\r\n');

function headersOf(response: string): Map<string, string[]> {
  const head = response.slice(0, response.indexOf('\r\n\r\n')).split('\r\n').slice(1);
  const headers = new Map<string, string[]>();
  for (const line of head) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  return headers;
}

describe("the app's hop-by-hop response headers", function () {
  this.timeout(30_000);
  let deployment: Deployment;
  before(async () => {
    deployment = await startDeployment({
      upstreamHandler: (_req, res) => {
        res.setHeader('Connection', 'keep-alive, X-Internal-Route');
        res.setHeader('Keep-Alive', 'timeout=99, max=1000');
        res.setHeader('X-Internal-Route', 'db-7.internal');
        res.setHeader('Proxy-Connection', 'keep-alive');
        res.setHeader('X-App', 'kept');
        res.setHeader('Content-Type', 'text/plain');
        res.write('streamed ');
        res.end('answer');
      },
    });
  });
  after(() => deployment.close());

  const request = (connection: string) =>
    `GET /public/page HTTP/1.1\r\nHost: ${new URL(deployment.url).host}\r\n${connection}\r\n`;

  it('are not passed on: Keep-Alive, Proxy-Connection and what the Connection header names; the rest is', async () => {
    const response = await raw(deployment.url, request(''), chunkedBodyEnded);
    expect(response).to.match(/^HTTP\/1\.1 200 /);
    const headers = headersOf(response);
    expect(headers.get('x-app')).to.deep.equal(['kept']);
    expect(headers.has('x-internal-route'), "named by the app's Connection header").to.equal(false);
    expect(headers.has('proxy-connection')).to.equal(false);
    expect(headers.get('keep-alive') ?? []).not.to.include('timeout=99, max=1000');
    expect(headers.get('connection')).to.deep.equal(['keep-alive']);
    expect(response).to.contain('streamed ').and.to.contain('answer');
  });

  it('a client that asks to close gets Connection: close and a closed connection, whatever the app keeps', async () => {
    // Resolves only when gatehouse closes the connection (else the test times out).
    const response = await raw(deployment.url, request('Connection: close\r\n'));
    expect(response).to.match(/^HTTP\/1\.1 200 /);
    expect(headersOf(response).get('connection')).to.deep.equal(['close']);
  });

  it('an HTTP/1.0 client gets a close-delimited answer, not chunks it cannot read', async () => {
    const response = await raw(
      deployment.url,
      `GET /public/page HTTP/1.0\r\nHost: ${new URL(deployment.url).host}\r\n\r\n`,
    );
    expect(response).to.match(/^HTTP\/1\.1 200 /);
    const headers = headersOf(response);
    expect(headers.has('transfer-encoding')).to.equal(false);
    expect(headers.get('connection')).to.deep.equal(['close']);
    expect(response.slice(response.indexOf('\r\n\r\n') + 4)).to.equal('streamed answer');
  });
});
