// A burst of pipelined requests past what one connection may have waiting: node parses them all
// at once, so gatehouse bounds the queue; the requests within the bound are answered in order, the
// last of them with `Connection: close`, and the connection is closed cleanly behind it (a client
// retries what got no answer, as HTTP/1.1 pipelining has it). Never silence, never a reset.
import { expect } from 'chai';

import { MAX_PIPELINED_WAITING } from '../../src/sidecar/serve-requests.js';
import { rawConnection } from '../support/raw-http.js';
import { startDeployment, type Deployment } from '../support/sign-in.js';

/** The status line and headers of each response in `received`, in order (bodies are `ok <path>`, framed by length). */
function heads(received: string): string[] {
  return received
    .split(/(?=HTTP\/1\.1 \d{3} )/)
    .filter((part) => part.startsWith('HTTP/1.1 '))
    .map((part) => part.slice(0, part.indexOf('\r\n\r\n')));
}

describe('a pipelined burst past the per-connection bound', function () {
  this.timeout(30_000);
  let deployment: Deployment;
  let host: string;
  /** What the app answered, in order. */
  const seen: string[] = [];

  before(async () => {
    deployment = await startDeployment({
      upstreamHandler: (req, res) => {
        req.resume().on('end', () => {
          seen.push(req.url ?? '');
          res.end(`ok ${req.url}`);
        });
      },
    });
    host = new URL(deployment.url).host;
  });
  after(() => deployment.close());
  beforeEach(() => (seen.length = 0));

  for (const burst of [MAX_PIPELINED_WAITING + 2, 1_000]) {
    it(`${burst} requests at once: the first ${MAX_PIPELINED_WAITING + 1} answered in order, the last with Connection: close, then a clean close`, async () => {
      const { socket, received } = rawConnection(deployment.url);
      let reset = false;
      socket.on('error', () => (reset = true));
      let requests = '';
      for (let i = 0; i < burst; i++) requests += `GET /public/${i} HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
      socket.write(requests);
      const response = await received;
      const answered = MAX_PIPELINED_WAITING + 1;
      const all = heads(response);
      expect(all, response.slice(0, 300)).to.have.length(answered);
      for (const [i, head] of all.entries()) {
        expect(head, `answer ${i}`).to.match(/^HTTP\/1\.1 200 /);
        if (i < answered - 1) expect(head, `answer ${i}`).to.match(/\r\nConnection: keep-alive/i);
        else expect(head, 'the last answer').to.match(/\r\nConnection: close/i);
      }
      const bodies = [...response.matchAll(/ok (\/public\/\d+)/g)].map((m) => m[1]);
      expect(bodies).to.deep.equal(Array.from({ length: answered }, (_, i) => `/public/${i}`));
      expect(seen).to.deep.equal(bodies);
      expect(reset, 'reset').to.equal(false);
    });
  }

  it('a burst within the bound is answered whole, and the connection stays open', async () => {
    const { socket, received } = rawConnection(deployment.url);
    let requests = '';
    for (let i = 0; i < MAX_PIPELINED_WAITING; i++) requests += `GET /public/${i} HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
    let response = '';
    const all = new Promise<void>((resolve) =>
      socket.on('data', (data: Buffer) => {
        response += data.toString('latin1');
        if (
          heads(response).length === MAX_PIPELINED_WAITING &&
          response.endsWith(`/public/${MAX_PIPELINED_WAITING - 1}`)
        )
          resolve();
      }),
    );
    socket.write(requests);
    await all;
    expect(heads(response).every((head) => /\r\nConnection: keep-alive/i.test(head))).to.equal(true);
    expect(socket.destroyed).to.equal(false);
    socket.destroy();
    await received;
  });
});
