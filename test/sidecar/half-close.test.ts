// A client that closes its side of the connection (a FIN) is taken as gone, as
// nginx takes it (499, unless proxy_ignore_client_abort): what gatehouse answers
// itself at once still reaches it, a forwarded request is aborted at the app
// rather than holding a connection for nobody (abandonment.test.ts), and a FIN
// in the middle of a body is an incomplete request, never forwarded as whole.
import { expect } from 'chai';

import { rawConnection } from '../support/raw-http.js';
import { recordingApp, type RecordingApp } from '../support/recording-app.js';
import { startDeployment, type Deployment } from '../support/sign-in.js';

describe('half-closed clients', function () {
  this.timeout(20_000);
  let app: RecordingApp;
  let deployment: Deployment;
  before(async () => {
    app = recordingApp();
    deployment = await startDeployment({ upstreamHandler: app.handler, upstreamTimeoutMs: 10_000 });
  });
  after(() => deployment.close());

  const send = async (request: string): Promise<{ response: string; took: number }> => {
    const { socket, received } = rawConnection(deployment.url);
    const started = Date.now();
    socket.end(request);
    return { response: await received, took: Date.now() - started };
  };
  const host = () => new URL(deployment.url).host;

  it('a challenge and a refusal reach a half-closed client too', async () => {
    expect(
      (await send(`GET /private HTTP/1.1\r\nHost: ${host()}\r\nAccept: application/json\r\n\r\n`)).response,
    ).to.match(/^HTTP\/1\.1 401 /);
    expect((await send(`GET /x HTTP/1.1\r\nHost: bad host\r\n\r\n`)).response).to.match(/^HTTP\/1\.1 400 /);
  });

  it('a half-close in the middle of a body: the request is not forwarded whole, and the connection does not hang', async () => {
    const before = app.requests.length;
    const cut = await send(`POST /public/cut HTTP/1.1\r\nHost: ${host()}\r\nContent-Length: 100\r\n\r\nonly ten b`);
    expect(cut.took).to.be.below(5_000);
    expect(cut.response === '' || /^HTTP\/1\.1 (400|408|502) /.test(cut.response), cut.response).to.equal(true);
    expect(app.requests.slice(before).filter((r) => r.body.length === 100)).to.deep.equal([]);
  });
});
