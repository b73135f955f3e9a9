import { expect } from 'chai';

import { validateReturnUrl } from '../../src/core/return-url.js';

const ALLOWED = ['https://app.example.com', 'https://partner.example.org:8443/some/path'];

describe('return URL validation (no open redirects)', () => {
  const accepted: Array<[string, string]> = [
    ['/', '/'],
    ['/dashboard', '/dashboard'],
    ['/search?q=a%20b&x=1#top', '/search?q=a%20b&x=1#top'],
    ['/a/./b/../c', '/a/c'],
    ['/unicode/é', '/unicode/%C3%A9'],
    // An app path's own query is the app's business, even with redirect-like names.
    ['/search?next=2', '/search?next=2'],
    ['/x?returnUrl=%2Fy', '/x?returnUrl=%2Fy'],
    // gatehouse's own confirmation pages are fine destinations.
    ['/.auth/login/done', '/.auth/login/done'],
    ['/.auth/logout/done', '/.auth/logout/done'],
    ['https://app.example.com/after', 'https://app.example.com/after'],
    ['https://APP.example.com:443/x', 'https://app.example.com/x'],
    ['https://partner.example.org:8443/', 'https://partner.example.org:8443/'],
  ];
  for (const [raw, location] of accepted) {
    it(`accepts ${JSON.stringify(raw)}`, () => {
      expect(validateReturnUrl(raw, ALLOWED)).to.deep.equal({ ok: true, location });
    });
  }

  const refused = [
    '//evil.example',
    '///evil.example',
    '/\\evil.example',
    '\\\\evil.example',
    '/%5Cevil.example',
    '/%5cevil.example',
    '/%255Cevil.example',
    '/%2F/evil.example',
    '/%252F%252Fevil.example',
    '/%09/evil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    '/%0D%0ASet-Cookie:x=y',
    '/%00',
    'https:evil.example',
    'https:/evil.example',
    'http://app.example.com@evil.example',
    'https://app.example.com:pw@evil.example/',
    'https://user@app.example.com/',
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    ' javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox',
    'https://evil.example',
    'https://app.example.com.evil.example/',
    'http://app.example.com/',
    'https://app.example.com:444/',
    'https://partner.example.org/',
    'evil.example',
    'dashboard',
    '',
    '/.auth/login/aad?post_login_redirect_uri=https://evil.example',
    '/.auth/login/aad',
    '/.auth/logout?post_logout_redirect_uri=https://evil.example',
    '/.auth/login/aad/callback?code=x',
    '/.auth/refresh',
    '/%2Eauth/login/aad?post_login_redirect_uri=https://evil.example',
    '/%252Eauth/logout',
    '/a/../.auth/login/aad',
    'https://app.example.com/login?next=https://evil.example',
    'https://app.example.com/x?post_login_redirect_uri=//evil.example',
    `/${'a'.repeat(3000)}`,
  ];
  for (const raw of refused) {
    it(`refuses ${JSON.stringify(raw.length > 60 ? `${raw.slice(0, 60)}…` : raw)}`, () => {
      const verdict = validateReturnUrl(raw, ALLOWED);
      expect(verdict.ok, JSON.stringify(verdict)).to.equal(false);
    });
  }

  it('with no allow-list, only same-origin paths pass', () => {
    expect(validateReturnUrl('https://app.example.com/x').ok).to.equal(false);
    expect(validateReturnUrl('/x').ok).to.equal(true);
  });

  it('a malformed allow-list entry matches nothing', () => {
    expect(validateReturnUrl('https://app.example.com/', ['not a url']).ok).to.equal(false);
  });

  it('malformed percent-escapes do not throw', () => {
    expect(validateReturnUrl('/%E0%A4%A', ALLOWED)).to.deep.equal({ ok: true, location: '/%E0%A4%A' });
  });
});

describe('fragment-preserving sign-in page', () => {
  it('keeps hostile return paths as data inside the script, pinned by a CSP hash', async () => {
    const { createHash } = await import('node:crypto');
    const { fragmentPreservingRedirect } = await import('../../src/core/http/responses.js');
    const decision = fragmentPreservingRedirect('/.auth/login/dev?post_login_redirect_uri=', '/x</script><script>alert(1)</script>', []);
    if (decision.kind !== 'respond') expect.fail('expected a response');
    const html = decision.body!.toString('utf8');
    expect(html).not.to.contain('</script><script>alert(1)');
    expect(html).to.contain('\\u003c/script>');
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    const hash = createHash('sha256').update(script).digest('base64');
    expect(decision.headers['Content-Security-Policy']).to.equal(`default-src 'none'; script-src 'sha256-${hash}'`);
  });
});
