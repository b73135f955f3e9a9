// The fetch that takes a token answer's ID token aside, against a real
// loopback server: openid-client then reads the answer without it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { expect } from 'chai';

import { IdTokenAside } from '../../../src/core/oidc/id-token-aside.js';

describe('the ID token taken aside from a token answer', () => {
  let server: http.Server;
  let url: string;
  let answer: { status: number; body: string };
  before(async () => {
    server = http.createServer((_req, res) => {
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const post = (aside: IdTokenAside) =>
    aside.fetch(url, { method: 'POST', headers: {}, body: 'grant_type=x' } as never);

  it('a successful answer reaches openid-client without its id_token, which the aside holds', async () => {
    answer = { status: 200, body: JSON.stringify({ access_token: 'at', token_type: 'Bearer', id_token: 'a.b.c' }) };
    const aside = new IdTokenAside();
    const response = await post(aside);
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.equal('application/json');
    expect(await response.json()).to.deep.equal({ access_token: 'at', token_type: 'Bearer' });
    expect(aside.idToken).to.equal('a.b.c');
  });

  it('an answer without an ID token, an error answer and one that is not JSON pass unchanged', async () => {
    for (answer of [
      { status: 200, body: '{"access_token":"at","token_type":"Bearer"}' },
      { status: 400, body: '{"error":"invalid_grant","id_token":"x.y.z"}' },
      { status: 200, body: '<html>not a token answer</html>' },
      { status: 200, body: '["id_token"]' },
    ]) {
      const aside = new IdTokenAside();
      const response = await post(aside);
      expect(response.status).to.equal(answer.status);
      expect(await response.text()).to.equal(answer.body);
      expect(aside.idToken).to.equal(undefined);
    }
  });
});
