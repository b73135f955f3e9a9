import { expect } from 'chai';

import {
  MAX_ORIGINAL_URI_LENGTH,
  MISSING_ORIGINAL_MESSAGE,
  readOriginalRequest,
  type OriginalRequest,
  type UnreadableOriginal,
} from '../../src/core/forward-auth/original-request.js';
import type { RequestView } from '../../src/core/http/request-view.js';

/** A verify request as a web server on loopback sends it. */
function verifyRequest(headers: Array<[string, string]>): RequestView {
  return {
    method: 'GET',
    path: '/.auth/verify',
    query: '',
    headers,
    scheme: 'http',
    host: '127.0.0.1:8081',
    remoteAddress: '127.0.0.1',
    readBody: () => Promise.reject(new Error('no body')),
  };
}

const NGINX: Array<[string, string]> = [
  ['X-Original-URI', '/reports/q1?format=pdf&x=1'],
  ['X-Original-Method', 'POST'],
  ['X-Forwarded-Host', 'app.example:8443'],
  ['X-Forwarded-Proto', 'https'],
];
const FORWARDED: Array<[string, string]> = [
  ['X-Forwarded-Method', 'GET'],
  ['X-Forwarded-Proto', 'http'],
  ['X-Forwarded-Host', 'app.example'],
  ['X-Forwarded-Uri', '/home'],
];

function read(headers: Array<[string, string]>, withheld?: string[]): OriginalRequest {
  const result = readOriginalRequest(verifyRequest(headers), withheld);
  if ('problem' in result) throw new Error(`unexpected problem: ${result.problem}`);
  return result;
}

function problem(headers: Array<[string, string]>): string {
  const result = readOriginalRequest(verifyRequest(headers));
  expect(result, 'expected the original request to be refused').to.have.property('problem');
  return (result as UnreadableOriginal).problem;
}

/** NGINX with one header's value replaced. */
function nginxWith(name: string, value: string): Array<[string, string]> {
  return NGINX.map(([n, v]) => [n, n === name ? value : v]);
}

describe('forward auth: reading the original request', () => {
  it("nginx's convention: method, path, query, host and scheme from the headers its configuration sets", () => {
    const { convention, view } = read([...NGINX, ['Cookie', 'PlatformAuthSession=abc'], ['Accept', 'text/html']]);
    expect(convention).to.equal('nginx');
    expect(view).to.include({
      method: 'POST',
      path: '/reports/q1',
      query: 'format=pdf&x=1',
      host: 'app.example:8443',
      scheme: 'https',
      remoteAddress: '127.0.0.1',
    });
    // The rest are the original's headers (its cookies, its credentials); the ones read are not among them.
    expect(view.headers).to.deep.equal([
      ['Cookie', 'PlatformAuthSession=abc'],
      ['Accept', 'text/html'],
    ]);
  });

  it("Traefik's and Caddy's convention: X-Forwarded-Method and -Uri, names in any case", () => {
    const { convention, view } = read(FORWARDED.map(([name, value]) => [name.toLowerCase(), value]));
    expect(convention).to.equal('forwarded');
    expect(view).to.include({ method: 'GET', path: '/home', query: '', host: 'app.example', scheme: 'http' });
    expect(view.headers).to.deep.equal([]);
  });

  it('a chain of proxies: the first scheme of a list; a list of hosts stays whole, for the core to refuse', () => {
    const { view } = read([
      ...FORWARDED.filter(([n]) => !/host|proto/i.test(n)),
      ['X-Forwarded-Host', ' front.example, inner.example '],
      ['X-Forwarded-Proto', 'HTTPS, http'],
    ]);
    // The app gets the whole Host the web server sent: judging its first entry would judge a host the app never sees.
    expect(view).to.include({ host: 'front.example, inner.example', scheme: 'https' });
  });

  it('without the original request: a problem that says which headers to send', () => {
    expect(problem([['Cookie', 'a=b']])).to.equal(MISSING_ORIGINAL_MESSAGE);
  });

  it('each header a convention reads is required: the missing ones are named', () => {
    expect(problem(NGINX.filter(([n]) => n !== 'X-Original-Method'))).to.equal('missing X-Original-Method');
    expect(problem(FORWARDED.filter(([n]) => !n.startsWith('X-Forwarded-Host') && n !== 'X-Forwarded-Proto'))).to.equal(
      'missing X-Forwarded-Host, X-Forwarded-Proto',
    );
    expect(problem([['X-Forwarded-Uri', '/']])).to.equal(
      'missing X-Forwarded-Method, X-Forwarded-Host, X-Forwarded-Proto',
    );
  });

  it('both conventions at once are refused when they disagree: one of them could be a client header the web server let through', () => {
    expect(problem([...NGINX, ['X-Forwarded-Uri', '/public/x'], ['X-Forwarded-Method', 'POST']])).to.match(
      /X-Original-URI and X-Forwarded-Uri disagree/,
    );
    expect(
      problem([...NGINX, ['X-Forwarded-Uri', '/reports/q1?format=pdf&x=1'], ['X-Forwarded-Method', 'GET']]),
    ).to.match(/X-Original-Method and X-Forwarded-Method disagree/);
    // Half of the other convention: which half is the web server's cannot be told.
    expect(problem([...NGINX, ['X-Forwarded-Uri', '/reports/q1?format=pdf&x=1']])).to.equal(
      'missing X-Forwarded-Method',
    );
    expect(problem([...FORWARDED, ['X-Original-Method', 'GET']])).to.equal('missing X-Original-URI');
  });

  it('both conventions at once, agreeing, are read as one request, answered as nginx is', () => {
    const { convention, view } = read([
      ...NGINX,
      ['X-Forwarded-Uri', '/reports/q1?format=pdf&x=1'],
      ['x-forwarded-method', 'POST'],
      ['Accept', 'text/html'],
    ]);
    expect(convention).to.equal('nginx');
    expect(view).to.include({ method: 'POST', path: '/reports/q1', query: 'format=pdf&x=1', host: 'app.example:8443' });
    expect(view.headers).to.deep.equal([['Accept', 'text/html']]);
  });

  it('a header sent twice is refused, whichever value a reader would have taken', () => {
    expect(problem([...NGINX, ['x-original-uri', '/public/']])).to.equal('X-Original-URI was sent more than once');
    expect(problem([...FORWARDED, ['X-Forwarded-Host', 'evil.example']])).to.equal(
      'X-Forwarded-Host was sent more than once',
    );
  });

  describe('hostile values', () => {
    it('an absolute URI is not a request target in origin form', () => {
      expect(problem(nginxWith('X-Original-URI', 'http://evil.example/reports'))).to.match(
        /^X-Original-URI is not a path starting with "\/"/,
      );
      expect(problem(nginxWith('X-Original-URI', 'reports'))).to.match(/not a path/);
      expect(problem(nginxWith('X-Original-URI', ''))).to.match(/not a path/);
    });

    it('CR, LF, NUL, other control characters, blanks, fragments and non-ASCII characters are refused', () => {
      for (const uri of [
        '/a\r\nX-Platform-Client-Principal-Id: admin',
        '/a\nb',
        '/a\u0000',
        '/a\u0001',
        '/a\u007f',
        '/a b',
        '/a\tb',
        '/a#frag',
        '/caf\u00e9',
        '/\u2215evil',
      ]) {
        expect(problem(nginxWith('X-Original-URI', uri)), JSON.stringify(uri)).to.match(
          /holds a character no request target has/,
        );
      }
    });

    it('an overlong target is refused; the longest allowed one is read', () => {
      const longest = `/${'a'.repeat(MAX_ORIGINAL_URI_LENGTH - 1)}`;
      expect(read(nginxWith('X-Original-URI', longest)).view.path).to.equal(longest);
      expect(problem(nginxWith('X-Original-URI', `${longest}a`))).to.equal(
        `X-Original-URI is longer than ${MAX_ORIGINAL_URI_LENGTH} characters`,
      );
    });

    it('a path starting with // is read as the path it is (the app gets it so); the core judges it like any other', () => {
      const { view } = read(nginxWith('X-Original-URI', '//evil.example/x?y=1'));
      expect(view).to.include({ path: '//evil.example/x', query: 'y=1' });
    });

    it('a method must be an HTTP token', () => {
      for (const method of ['', 'GET /x', 'GE\r\nT', 'G\u00c9T', 'X'.repeat(33)])
        expect(problem(nginxWith('X-Original-Method', method)), JSON.stringify(method)).to.match(/not an HTTP method/);
      expect(read(nginxWith('X-Original-Method', 'PROPFIND')).view.method).to.equal('PROPFIND');
    });

    it('a scheme other than http or https is refused; an empty host too', () => {
      expect(problem(nginxWith('X-Forwarded-Proto', 'javascript'))).to.equal(
        'X-Forwarded-Proto is neither http nor https',
      );
      expect(problem(nginxWith('X-Forwarded-Proto', ''))).to.equal('X-Forwarded-Proto is neither http nor https');
      expect(problem(nginxWith('X-Forwarded-Host', '  '))).to.equal('X-Forwarded-Host is empty');
    });
  });

  it("the configuration's own host and scheme headers (forwardProxy Custom) are withheld from the original: they cannot override what was read", () => {
    const { view } = read([...FORWARDED, ['X-Original-Host', 'evil.example'], ['Accept', '*/*']], ['x-original-host']);
    expect(view.headers).to.deep.equal([['Accept', '*/*']]);
    expect(view.host).to.equal('app.example');
  });

  it('the original request has no body to read', async () => {
    const { view } = read(NGINX);
    let refused: unknown;
    await view.readBody(10).catch((error: unknown) => (refused = error));
    expect(refused).to.be.instanceOf(Error);
  });
});
