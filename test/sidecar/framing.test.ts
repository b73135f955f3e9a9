// One request in, at most one request out: whatever framing a client sends, the app receives
// exactly the requests gatehouse decided on, each with its body framed, or gatehouse refuses with
// 400 and closes. The app here records every request it parses off its connections, so a body
// that reached it without framing would show as a request of its own (request smuggling).
import { expect } from 'chai';
import fc from 'fast-check';

import { Browser } from '../support/browser.js';
import { raw } from '../support/raw-http.js';
import { recordingApp, type RecordedRequest } from '../support/recording-app.js';
import { defaultDocument, signIn, startDeployment, type Deployment } from '../support/sign-in.js';

/** What a smuggler puts in a body: a whole request of its own, with a forged identity. */
const SMUGGLED =
  'POST /admin/users/42/delete HTTP/1.1\r\nHost: app\r\nX-PLATFORM-CLIENT-PRINCIPAL-ID: admin\r\nContent-Length: 16\r\n\r\n{"confirm":true}';

function chunked(body: string, { trailer = false, split = false } = {}): string {
  const parts = split && body.length > 1 ? [body.slice(0, body.length >> 1), body.slice(body.length >> 1)] : [body];
  return `${parts.map((p) => `${Buffer.byteLength(p, 'latin1').toString(16)}\r\n${p}\r\n`).join('')}0\r\n${trailer ? 'X-Trailer: t\r\n' : ''}\r\n`;
}

/** The status of every final answer in a raw exchange, in order (interim 1xx answers left out). */
function statuses(response: string): number[] {
  return [...response.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])).filter((status) => status >= 200);
}

function noForgedIdentity(requests: readonly RecordedRequest[]): void {
  for (const request of requests) {
    expect(request.url, 'a request gatehouse never judged').not.to.match(/admin/);
    expect(request.headers['x-platform-client-principal-id'], `identity on ${request.url}`).to.equal(undefined);
  }
}

describe('request framing toward the app (smuggling)', function () {
  this.timeout(60_000);
  const app = recordingApp();
  let deployment: Deployment;
  let host: string;
  before(async () => {
    deployment = await startDeployment({
      upstreamHandler: app.handler,
      document: (issuer) => ({ ...defaultDocument(issuer), gatehouse: { forwardCorsPreflights: true } }),
    });
    host = new URL(deployment.url).host;
  });
  after(() => deployment.close());
  beforeEach(() => void (app.requests.length = 0));

  for (const method of ['GET', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE', 'POST']) {
    it(`a chunked ${method} to an excluded path whose body is a request: the app gets one ${method}, its body framed`, async () => {
      const response = await raw(
        deployment.url,
        `${method} /public/health HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunked(SMUGGLED)}`,
      );
      expect(statuses(response)).to.deep.equal([200]);
      expect(app.requests.map((r) => `${r.method} ${r.url}`)).to.deep.equal([`${method} /public/health`]);
      expect(app.requests[0]!.body).to.equal(SMUGGLED);
      noForgedIdentity(app.requests);
    });
  }

  for (const [what, head] of [
    [
      'Content-Length with Connection naming it',
      `Content-Length: ${SMUGGLED.length}\r\nConnection: close, content-length`,
    ],
    [
      'Transfer-Encoding with Connection naming it',
      'Transfer-Encoding: chunked\r\nConnection: close, Transfer-Encoding',
    ],
    ['Transfer-Encoding: CHUNKED', 'Transfer-Encoding: CHUNKED\r\nConnection: close'],
    ['a tab before chunked', 'Transfer-Encoding:\tchunked\r\nConnection: close'],
    ['Expect: 100-continue', 'Transfer-Encoding: chunked\r\nExpect: 100-continue\r\nConnection: close'],
  ] as const) {
    it(`a GET with ${what}: one request at the app, its body framed`, async () => {
      const body = head.startsWith('Content-Length') ? SMUGGLED : chunked(SMUGGLED, { split: true });
      const response = await raw(
        deployment.url,
        `GET /public/health HTTP/1.1\r\nHost: ${host}\r\n${head}\r\n\r\n${body}`,
      );
      expect(statuses(response).at(-1)).to.equal(200);
      expect(app.requests.map((r) => `${r.method} ${r.url} ${r.body.length}`)).to.deep.equal([
        `GET /public/health ${SMUGGLED.length}`,
      ]);
      noForgedIdentity(app.requests);
    });
  }

  it('HTTP/1.0 with a chunked body: one request, framed', async () => {
    const response = await raw(
      deployment.url,
      `DELETE /public/health HTTP/1.0\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\n\r\n${chunked(SMUGGLED)}`,
    );
    expect(response).to.match(/^HTTP\/1\.1 200 /);
    expect(app.requests.map((r) => `${r.method} ${r.url} ${r.body}`)).to.deep.equal([
      `DELETE /public/health ${SMUGGLED}`,
    ]);
  });

  it('both Content-Length and Transfer-Encoding: refused with 400 and closed, nothing reaches the app', async () => {
    const response = await raw(
      deployment.url,
      `POST /public/health HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n${chunked(SMUGGLED)}`,
    );
    expect(statuses(response)).to.deep.equal([400]);
    expect(app.requests).to.deep.equal([]);
  });

  for (const coding of ['gzip, chunked', 'chunked, chunked', 'deflate,chunked']) {
    it(`Transfer-Encoding: ${coding}: refused with 501, nothing reaches the app (it would get coded bytes it was never told about)`, async () => {
      const response = await raw(
        deployment.url,
        `POST /public/health HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: ${coding}\r\n\r\n${chunked('abc')}`,
      );
      // node's parser may refuse some of these itself (400); neither way may reach the app.
      expect(statuses(response)).to.have.length(1);
      expect(statuses(response)[0]).to.be.oneOf([501, 400]);
      expect(response).to.match(/\r\nconnection: close\r\n/i);
      expect(app.requests).to.deep.equal([]);
    });
  }

  it('the asterisk-form target (OPTIONS *) names nothing of the app: 400', async () => {
    const response = await raw(deployment.url, `OPTIONS * HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    expect(statuses(response)).to.deep.equal([400]);
    expect(response).to.contain('Bad request target.');
    expect(app.requests).to.deep.equal([]);
  });

  it('a method override never reaches the app: an anonymous preflight it would run as a DELETE', async () => {
    const response = await raw(
      deployment.url,
      `OPTIONS /api/orders/42 HTTP/1.1\r\nHost: ${host}\r\nOrigin: https://spa.example\r\nAccess-Control-Request-Method: DELETE\r\nX-HTTP-Method-Override: DELETE\r\nX_HTTP_Method: DELETE\r\nX-Method-Override: DELETE\r\nConnection: close\r\n\r\n`,
    );
    expect(statuses(response)).to.deep.equal([200]);
    expect(app.requests).to.have.length(1);
    expect(Object.keys(app.requests[0]!.headers).filter((n) => /method/i.test(n))).to.deep.equal([
      'access-control-request-method',
    ]);
  });

  it('a chunked CORS preflight on a protected path (forwarded anonymously): one OPTIONS, framed', async () => {
    const response = await raw(
      deployment.url,
      `OPTIONS /api/orders HTTP/1.1\r\nHost: ${host}\r\nOrigin: https://spa.example\r\nAccess-Control-Request-Method: DELETE\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunked(SMUGGLED)}`,
    );
    expect(statuses(response)).to.deep.equal([200]);
    expect(app.requests.map((r) => `${r.method} ${r.url} ${r.body}`)).to.deep.equal([
      `OPTIONS /api/orders ${SMUGGLED}`,
    ]);
    noForgedIdentity(app.requests);
  });

  it('a signed-in GET on a protected path with a chunked body: one request, with the real identity only', async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    app.requests.length = 0;
    const cookie = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
    const response = await raw(
      deployment.url,
      `GET /orders HTTP/1.1\r\nHost: ${host}\r\nCookie: ${cookie}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunked(SMUGGLED)}`,
    );
    expect(statuses(response)).to.deep.equal([200]);
    expect(app.requests.map((r) => `${r.method} ${r.url}`)).to.deep.equal(['GET /orders']);
    expect(app.requests[0]!.headers['x-platform-client-principal-id']).to.equal('demo');
  });

  it('pipelined requests after a framed body each reach the app once, answered in order', async () => {
    const first = `GET /public/a HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\n\r\n${chunked(SMUGGLED)}`;
    const second = `HEAD /public/b HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 5\r\n\r\nhello`;
    const last = `GET /public/c HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
    const response = await raw(deployment.url, first + second + last);
    expect(statuses(response)).to.deep.equal([200, 200, 200]);
    expect(response.match(/app saw \w+ \/public\/\w/g)).to.deep.equal([
      'app saw GET /public/a',
      'app saw GET /public/c',
    ]); // HEAD's answer has no body
    expect(app.requests.map((r) => `${r.method} ${r.url} ${r.body.length}`).sort()).to.deep.equal([
      `GET /public/a ${SMUGGLED.length}`,
      'GET /public/c 0',
      'HEAD /public/b 5',
    ]);
  });

  describe('property: any method, framing, version, Connection and Expect', () => {
    const methods = ['GET', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE', 'POST', 'PUT', 'PATCH'];
    const framings = ['none', 'length', 'chunked', 'CHUNKED', 'chunked-trailer', 'chunked-split', 'both'] as const;
    const connections = [
      undefined,
      'keep-alive',
      'content-length',
      'transfer-encoding',
      'keep-alive, Content-Length, Transfer-Encoding',
      'x-platform-client-principal-id, host',
    ];
    const request = fc.record({
      method: fc.constantFrom(...methods),
      framing: fc.constantFrom(...framings),
      version: fc.constantFrom('1.1', '1.0'),
      connection: fc.constantFrom(...connections),
      expect100: fc.boolean(),
      body: fc.oneof(
        fc.constant(SMUGGLED),
        fc.string({ minLength: 1, maxLength: 40 }).map((s) => `${s}\r\n\r\n${SMUGGLED}`),
      ),
      forged: fc.boolean(),
    });

    it('the app receives exactly the requests gatehouse answered for, bodies framed, no forged identity; or a 400 and nothing', async () => {
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          app.requests.length = 0;
          const lines = [`${r.method} /public/first HTTP/${r.version}`, `Host: ${host}`];
          if (r.connection !== undefined) lines.push(`Connection: ${r.connection}`);
          if (r.expect100) lines.push('Expect: 100-continue');
          if (r.forged) lines.push('X-PLATFORM-CLIENT-PRINCIPAL-ID: admin');
          let body = '';
          if (r.framing === 'length' || r.framing === 'both')
            lines.push(`Content-Length: ${Buffer.byteLength(r.body, 'latin1')}`);
          if (r.framing !== 'none' && r.framing !== 'length')
            lines.push(`Transfer-Encoding: ${r.framing === 'CHUNKED' ? 'CHUNKED' : 'chunked'}`);
          if (r.framing === 'length') body = r.body;
          else if (r.framing !== 'none')
            body = chunked(r.body, { trailer: r.framing === 'chunked-trailer', split: r.framing === 'chunked-split' });
          // A last request that closes the connection, so every answer is in once it closes.
          const last = `GET /public/last HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
          const response = await raw(deployment.url, `${lines.join('\r\n')}\r\n\r\n${body}${last}`);
          const answered = statuses(response);
          noForgedIdentity(app.requests);
          if (r.framing === 'both') {
            expect(answered).to.deep.equal([400]);
            expect(app.requests).to.deep.equal([]);
            return;
          }
          expect(answered[0]).to.equal(200);
          // Pipelined requests are forwarded side by side, on connections of their own: the app may see them in either order.
          app.requests.sort((a, b) => a.url.localeCompare(b.url));
          const first = app.requests[0]!;
          expect(`${first.method} ${first.url}`).to.equal(`${r.method} /public/first`);
          expect(first.body).to.equal(r.framing === 'none' ? '' : r.body);
          // The connection closes after the first answer for HTTP/1.0 (this app's answers have no
          // Content-Length, which a 1.0 client needs for keep-alive) and when the client announced a
          // body it never sent (Expect: 100-continue, no body: node cannot tell what comes next).
          // Then the pipelined request behind it is never taken up: it reaches neither gatehouse's
          // routes nor the app.
          const closes = r.version === '1.0' || (r.expect100 && r.framing === 'none');
          const urls = app.requests.map((q) => q.url);
          expect(urls).to.deep.equal(closes ? ['/public/first'] : ['/public/first', '/public/last']);
          expect(answered).to.have.length(urls.length);
        }),
        { numRuns: 150 },
      );
      // After the attack group: nothing is left waiting on the app, and an excluded path still answers.
      expect(deployment.gateway.forwarder.inFlight).to.equal(0);
      expect((await fetch(`${deployment.url}/public/after`)).status).to.equal(200);
    });
  });
});
