// The origin redirects and callbacks are built from: the Host header, or the
// forwarded headers only when a proxy is configured to set them.
import { expect } from 'chai';
import fc from 'fast-check';

import type { AuthConfig } from '../../../src/core/config/auth-config.js';
import { isLoopbackHost, originUrl, requestOrigin, type RequestView } from '../../../src/core/http/request-view.js';

const view = (host: string, headers: Array<[string, string]> = [], scheme: 'http' | 'https' = 'http'): RequestView => ({
  method: 'GET',
  path: '/',
  query: '',
  headers: [['Host', host], ...headers],
  scheme,
  host,
  remoteAddress: '127.0.0.1',
  readBody: async () => Buffer.alloc(0),
});
const noProxy: Pick<AuthConfig, 'forwardProxy'> = { forwardProxy: { convention: 'NoProxy' } } as Pick<
  AuthConfig,
  'forwardProxy'
>;
const standard: Pick<AuthConfig, 'forwardProxy'> = { forwardProxy: { convention: 'Standard' } } as Pick<
  AuthConfig,
  'forwardProxy'
>;

describe('request origin', () => {
  it('follows the Host of each request, also when hosts alternate', () => {
    for (let i = 0; i < 3; i++) {
      expect(requestOrigin(view('App.Example:8443'), noProxy)).to.deep.equal({
        scheme: 'http',
        host: 'app.example:8443',
      });
      expect(requestOrigin(view('other.example', [], 'https'), noProxy)).to.deep.equal({
        scheme: 'https',
        host: 'other.example',
      });
      expect(requestOrigin(view('evil.example/path'), noProxy)).to.equal(null);
      expect(requestOrigin(view('app.example:65535'), noProxy)).to.deep.equal({
        scheme: 'http',
        host: 'app.example:65535',
      });
      expect(requestOrigin(view('app.example:65536'), noProxy)).to.equal(null);
      expect(requestOrigin(view('app.example:99999'), noProxy)).to.equal(null);
      expect(requestOrigin(view('app.example:0'), noProxy)).to.equal(null);
      expect(requestOrigin(view('[::1]:0808'), noProxy)).to.deep.equal({ scheme: 'http', host: '[::1]:808' });
      expect(requestOrigin(view('other.example', [], 'http'), noProxy)).to.deep.equal({
        scheme: 'http',
        host: 'other.example',
      });
    }
  });

  it('leaves out the scheme’s own port and leading zeros, as a URL does: a callback URL matches the one registered', () => {
    for (const [host, scheme, expected] of [
      ['app.example:443', 'https', 'app.example'],
      ['App.Example:00443', 'https', 'app.example'],
      ['app.example:80', 'http', 'app.example'],
      ['[::1]:080', 'http', '[::1]'],
      ['app.example:80', 'https', 'app.example:80'],
      ['app.example:443', 'http', 'app.example:443'],
      ['app.example:08443', 'https', 'app.example:8443'],
    ] as const) {
      const origin = requestOrigin(view(host, [], scheme), noProxy);
      expect(origin, host).to.deep.equal({ scheme, host: expected });
      expect(origin!.host).to.equal(new URL(`${scheme}://${host}`).host);
    }
    const forwarded = view('internal:8080', [
      ['X-Forwarded-Host', 'public.example:443'],
      ['X-Forwarded-Proto', 'https'],
    ]);
    expect(requestOrigin(forwarded, standard)).to.deep.equal({ scheme: 'https', host: 'public.example' });
  });

  it('refuses a host no browser could have used (the URL parser refuses it), and writes IP addresses as a URL does', () => {
    for (const host of ['256.1.1.1', '1.2.3.4.5', '[:::]', '[1::2::3]', '[1.2.3]'])
      expect(requestOrigin(view(host), noProxy), host).to.equal(null);
    expect(requestOrigin(view('[0:0::1]:8080'), noProxy)).to.deep.equal({ scheme: 'http', host: '[::1]:8080' });
    expect(requestOrigin(view('0x7f.1'), noProxy)).to.deep.equal({ scheme: 'http', host: '127.0.0.1' });
  });

  it('what any Host header yields is an origin a URL keeps as it is, with no credentials, path or other host in it (property)', () => {
    const piece = fc.constantFrom(
      'a',
      'app',
      'example',
      '.',
      '..',
      '-',
      ':',
      ':443',
      ':0',
      ':99999',
      '@',
      'evil',
      '/',
      '\\',
      '?',
      '#',
      '%2e',
      '[',
      ']',
      '::1',
      '1',
      '255',
      '256',
      '0x7f',
      ' ',
      '\t',
      'é',
      'xn--',
      '_',
    );
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 8 }),
        fc.constantFrom('http', 'https') as fc.Arbitrary<'http' | 'https'>,
        (parts, scheme) => {
          const origin = requestOrigin(view(parts.join(''), [], scheme), noProxy);
          if (origin === null) return;
          const url = new URL(`${originUrl(origin)}/.auth/login/x/callback`);
          expect(url.origin, parts.join('')).to.equal(originUrl(origin));
          expect(url.host).to.equal(origin.host);
          expect(url.username + url.password).to.equal('');
          expect(url.pathname).to.equal('/.auth/login/x/callback');
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('reads X-Forwarded-Host/Proto only when the Standard convention is configured', () => {
    const forwarded = view('internal:8080', [
      ['X-Forwarded-Host', 'public.example'],
      ['X-Forwarded-Proto', 'https'],
    ]);
    expect(requestOrigin(forwarded, noProxy)).to.deep.equal({ scheme: 'http', host: 'internal:8080' });
    expect(requestOrigin(forwarded, standard)).to.deep.equal({ scheme: 'https', host: 'public.example' });
    expect(requestOrigin(view('internal:8080', [['X-Forwarded-Host', 'bad host']]), standard)).to.equal(null);
    expect(requestOrigin(view('internal:8080', [['X-Forwarded-Proto', 'ftp']]), standard)).to.equal(null);
  });

  it('tells the hosts browsers count as this machine (secure contexts over plain http) from the others', () => {
    for (const host of [
      'localhost',
      'localhost:8080',
      'app.localhost',
      '127.0.0.1',
      '127.1.2.3:80',
      '[::1]',
      '[::1]:8443',
    ])
      expect(isLoopbackHost(host), host).to.equal(true);
    for (const host of [
      'app.example',
      'localhost.example',
      'mylocalhost',
      '128.0.0.1',
      '127.0.0.1.example',
      '[::2]',
      '[::ffff:127.0.0.1]',
      '192.0.2.2:8080',
    ]) {
      expect(isLoopbackHost(host), host).to.equal(false);
    }
  });
});
