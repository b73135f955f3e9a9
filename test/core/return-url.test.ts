import { expect } from 'chai';

import { challengeReturnUrl, MAX_RETURN_URL_LENGTH, validateReturnUrl } from '../../src/core/return-url.js';

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
    ['https://app.example.com/.auth/login/done', 'https://app.example.com/.auth/login/done'],
    ['/search?q=100%', '/search?q=100%'],
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
    // Dot segments that resolve to a scheme-relative path, in the location or a decoding of it.
    '/.//evil.example',
    '/%2e//evil.example',
    '/a/..//evil.example/path',
    '/x/%2E%2E//evil.example',
    '/./%2F/evil.example',
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
    // A malformed escape elsewhere (the fragment) does not stop the rest from being decoded.
    '/.auth%2Flogin%2Faad#%%',
    '/%2eauth/logout?x=%zz',
    // An allowed origin (here the app's own) is no way through gatehouse's routes either.
    'https://app.example.com/.auth/logout',
    'https://app.example.com/.auth/login/aad',
    'https://app.example.com/x/../.auth/refresh',
    'https://app.example.com/%2eauth/login/aad/callback',
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

  it('the length limit holds for the location as sent: percent-encoding that would push it over is refused', () => {
    // Nine characters per CJK character once encoded.
    const fits = `/${'中'.repeat(227)}`; // 1 + 227 × 9 = 2044
    const verdict = validateReturnUrl(fits);
    expect(verdict.ok).to.equal(true);
    expect(verdict.ok && verdict.location.length).to.equal(2044);
    expect(validateReturnUrl(`/${'中'.repeat(228)}`)).to.deep.equal({ ok: false, reason: 'too long once encoded' });
    expect(validateReturnUrl(`/q?${'<'.repeat(1000)}`)).to.deep.equal({ ok: false, reason: 'too long once encoded' });
    expect(validateReturnUrl(`https://app.example.com/${'é'.repeat(400)}`, ALLOWED)).to.deep.equal({
      ok: false,
      reason: 'too long once encoded',
    });
  });

  it('malformed percent-escapes do not throw', () => {
    expect(validateReturnUrl('/%E0%A4%A', ALLOWED)).to.deep.equal({ ok: true, location: '/%E0%A4%A' });
  });
});

describe('the return URL a challenge hands to sign-in', () => {
  const longest = `/p?${'q'.repeat(MAX_RETURN_URL_LENGTH - 3)}`;
  it('is the URL asked for, whole, up to the longest return URL accepted', () => {
    expect(challengeReturnUrl('/reports', 'year=2026&x=%2F')).to.equal('/reports?year=2026&x=%2F');
    expect(challengeReturnUrl('/reports', '')).to.equal('/reports');
    expect(longest.length).to.equal(MAX_RETURN_URL_LENGTH);
    expect(challengeReturnUrl('/p', longest.slice(3))).to.equal(longest);
  });

  it('drops a query that makes it too long, then a path that is too long itself; what it gives is always accepted', () => {
    const longPath = `/${'p'.repeat(MAX_RETURN_URL_LENGTH)}`;
    expect(challengeReturnUrl('/p', `${longest.slice(3)}q`)).to.equal('/p');
    expect(challengeReturnUrl(longPath, 'q=1')).to.equal('/');
    for (const [path, query] of [
      ['/p', 'q'.repeat(5000)],
      [longPath, ''],
      ['/reports', 'a=1'],
      ['//evil.example/x', ''],
      ['/files/a%5Cb', 'x=1'],
      ['/.auth/login/dev', ''],
    ]) {
      expect(validateReturnUrl(challengeReturnUrl(path!, query!)).ok, path).to.equal(true);
    }
  });

  it('a path sign-in would refuse as a return URL comes back to / (or without a query sign-in would refuse)', () => {
    expect(challengeReturnUrl('//evil.example/x', '')).to.equal('/');
    expect(challengeReturnUrl('/files/a%5Cb', 'x=1')).to.equal('/');
    expect(challengeReturnUrl('/.//evil.example', '')).to.equal('/');
    expect(challengeReturnUrl('/.auth/login/dev', '')).to.equal('/');
    expect(challengeReturnUrl('/app/.auth/refresh', '', '/app/.auth')).to.equal('/');
    expect(challengeReturnUrl('/search', 'q=%0d%0a')).to.equal('/search');
  });
});

describe('fragment-preserving sign-in page', () => {
  it('keeps hostile return paths as data inside the script, pinned by a CSP hash', async () => {
    const { createHash } = await import('node:crypto');
    const { fragmentPreservingRedirect } = await import('../../src/core/http/responses.js');
    const decision = fragmentPreservingRedirect(
      '/.auth/login/dev?post_login_redirect_uri=',
      '/x</script><script>alert(1)</script>',
      [],
    );
    if (decision.kind !== 'respond') expect.fail('expected a response');
    const html = decision.body!.toString('utf8');
    expect(html).not.to.contain('</script><script>alert(1)');
    expect(html).to.contain('\\u003c/script>');
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    const hash = createHash('sha256').update(script).digest('base64');
    expect(decision.headers['Content-Security-Policy']).to.equal(`default-src 'none'; script-src 'sha256-${hash}'`);
  });

  it('appends the fragment to the return URL, unless that would make it longer than sign-in accepts', async () => {
    const { runInNewContext } = await import('node:vm');
    const { fragmentPreservingRedirect } = await import('../../src/core/http/responses.js');
    const prefix = '/.auth/login/dev?post_login_redirect_uri=';
    const visit = (returnTo: string, hash: string): string => {
      const html = fragmentPreservingRedirect(prefix, returnTo, []).body!.toString('utf8');
      let went = '';
      runInNewContext(/<script>([\s\S]*?)<\/script>/.exec(html)![1]!, {
        location: { hash, replace: (url: string) => (went = url) },
        encodeURIComponent,
      });
      return decodeURIComponent(went.slice(prefix.length));
    };
    expect(visit('/docs?x=1', '#section-2')).to.equal('/docs?x=1#section-2');
    expect(visit('/docs', '')).to.equal('/docs');
    const fits = `#${'f'.repeat(MAX_RETURN_URL_LENGTH - '/docs'.length - 1)}`;
    expect(visit('/docs', fits)).to.equal(`/docs${fits}`);
    // Before the fix this return URL was 1 character too long, and sign-in refused it with a 400.
    expect(visit('/docs', `${fits}f`)).to.equal('/docs');
  });
});
