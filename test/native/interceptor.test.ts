// The interception hook: native host threads → C ABI engine → thread-safe
// function → a JavaScript policy → back, exactly once per request.
import { execFileSync } from 'node:child_process';

import { expect } from 'chai';

import type { NativeRequest } from '../../src/inserver/policy.js';

import { ADDON_PATH } from '../../src/native/addon.js';
import { createInterceptor } from '../../src/native/interceptor.js';

function requests(n: number): NativeRequest[] {
  return Array.from({ length: n }, (_, i) => ({ method: 'GET', scheme: 'https', host: 'app.example', path: `/item/${i}`, query: `i=${i}`, remoteAddress: '10.0.0.1', headers: [['X-Request', String(i)]] }));
}

describe('interception hook (native threads → JavaScript policy)', () => {
  it('64 native threads, a synchronous policy: every request decided once, with its own data', async () => {
    const interceptor = createInterceptor((request) => ({ kind: 'continue', remove: ['x-platform-client-principal'], set: [['X-PLATFORM-CLIENT-PRINCIPAL-ID', request.path.slice(6)]] }));
    const results = await interceptor.replay(requests(640), 64);
    interceptor.close();
    expect(results).to.have.length(640);
    results.forEach((r, i) => {
      expect(r.completions, `request ${i}`).to.equal(1);
      expect(r.kind).to.equal('continue');
      expect(r.set).to.deep.equal([['X-PLATFORM-CLIENT-PRINCIPAL-ID', String(i)]]);
      expect(r.remove).to.deep.equal(['x-platform-client-principal']);
    });
  });

  it('an asynchronous policy: the decision comes back after the call returned', async () => {
    const interceptor = createInterceptor(async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return { kind: 'respond', status: 302, headers: [['Location', `/.auth/login/dev?post_login_redirect_uri=${encodeURIComponent(request.path)}`]] };
    });
    const results = await interceptor.replay(requests(128), 16);
    interceptor.close();
    results.forEach((r, i) => {
      expect(r).to.include({ completions: 1, kind: 'respond', status: 302 });
      expect(r.headers).to.deep.equal([['Location', `/.auth/login/dev?post_login_redirect_uri=%2Fitem%2F${i}`]]);
    });
  });

  it('fails closed: a throwing, rejecting or nonsensical policy answers 500', async () => {
    for (const policy of [
      () => {
        throw new Error('boom');
      },
      () => Promise.reject(new Error('boom')),
      () => ({ kind: 'maybe' }),
      () => 42,
      () => ({ kind: 'respond', status: 99 }),
    ]) {
      const interceptor = createInterceptor(policy);
      const results = await interceptor.replay(requests(8), 4);
      interceptor.close();
      for (const r of results) expect(r).to.include({ completions: 1, kind: 'respond', status: 500 });
    }
  });

  it('close() while requests are pending answers them 503, never a hang', async () => {
    const interceptor = createInterceptor(() => new Promise(() => undefined)); // never decides
    const replay = interceptor.replay(requests(32), 8);
    // Each host thread waits for its request's decision, as a web-server thread would: 8 in flight.
    while (interceptor.pendingCount() < 8) await new Promise((resolve) => setTimeout(resolve, 5));
    interceptor.close();
    const results = await replay;
    for (const r of results) expect(r).to.include({ completions: 1, kind: 'respond', status: 503 });
    // After close, requests are answered 503 at once.
    const late = await interceptor.replay(requests(4), 2);
    for (const r of late) expect(r).to.include({ completions: 1, status: 503 });
  });

  it('does not keep the event loop alive', () => {
    const script = `const { Interceptor } = require(${JSON.stringify(ADDON_PATH)}); globalThis.keep = new Interceptor(() => ({ kind: 'continue' })); console.log('created');`;
    const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10_000 });
    expect(out.trim()).to.equal('created');
  });
});
