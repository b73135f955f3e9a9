// The interception hook, seen from a web-server module in another binary:
// the native test host (binding/host/module_host.cpp, the IIS module's
// portable parts) submits from native threads → the addon's C ABI engine →
// thread-safe function → a JavaScript policy → back, exactly once per request.
import { execFileSync } from 'node:child_process';

import { expect } from 'chai';

import type { NativeRequest } from '../../src/inserver/policy.js';
import { ADDON_PATH } from '../../src/native/addon.js';
import { createInterceptor, type InterceptorPolicy, type NativeInterceptor } from '../../src/native/interceptor.js';
import { loadModuleHost } from '../../src/native/module-host.js';

function requests(n: number): NativeRequest[] {
  return Array.from({ length: n }, (_, i) => ({
    method: 'GET',
    scheme: 'https',
    host: 'app.example',
    path: `/item/${i}`,
    query: `i=${i}`,
    remoteAddress: '10.0.0.1',
    headers: [['X-Request', String(i)]],
  }));
}

describe('interception hook (native host threads → JavaScript policy)', () => {
  const host = loadModuleHost();
  const open: NativeInterceptor[] = [];
  const attached = (policy: InterceptorPolicy, bodyPathPrefix = '/.auth/') => {
    const interceptor = createInterceptor(policy);
    interceptor.attachHost(host.link, bodyPathPrefix);
    open.push(interceptor);
    return interceptor;
  };
  afterEach(() => {
    for (const interceptor of open.splice(0)) interceptor.close();
  });

  it('64 native threads, a synchronous policy: every request decided once, with its own data, pending or inline', async () => {
    attached((request) => ({
      kind: 'continue',
      remove: ['x-platform-client-principal'],
      set: [['X-PLATFORM-CLIENT-PRINCIPAL-ID', request.path.slice(6)]],
    }));
    const results = await host.replay(requests(640), 64);
    expect(results).to.have.length(640);
    // The policy runs on the JavaScript thread, normally after submit has returned pending; an idle
    // JavaScript thread can also decide while the native thread is still inside submit (inline).
    // Either way the handler is applied once: resumed once when pending, never when inline.
    expect(results.filter((r) => !r.inline).length, 'requests that went pending').to.be.greaterThan(0);
    results.forEach((r, i) => {
      expect(r, `request ${i}`).to.include({ completions: 1, kind: 'continue', resumes: r.inline ? 0 : 1 });
      expect(r.set).to.deep.equal([['X-PLATFORM-CLIENT-PRINCIPAL-ID', String(i)]]);
      expect(r.remove).to.deep.equal(['x-platform-client-principal']);
    });
    // Without details (what the benchmark asks for): the same counts, none of the applied headers.
    const counts = await host.replay(requests(16), 4, false);
    for (const r of counts) {
      expect(r).to.include({ completions: 1, kind: 'continue', resumes: r.inline ? 0 : 1 });
      expect(r).to.not.have.any.keys('set', 'remove', 'headers', 'body');
    }
  });

  it('an asynchronous policy: the decision comes back after the call returned', async () => {
    attached(async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return {
        kind: 'respond',
        status: 302,
        headers: [['Location', `/.auth/login/dev?post_login_redirect_uri=${encodeURIComponent(request.path)}`]],
      };
    });
    const results = await host.replay(requests(128), 16);
    // Nearly all go pending and are resumed; a native thread descheduled for longer than the policy's
    // timer between submit and settling finds the decision already there, and applies it inline.
    expect(results.filter((r) => !r.inline).length, 'requests that went pending').to.be.greaterThan(0);
    results.forEach((r, i) => {
      expect(r, `request ${i}`).to.include({ completions: 1, kind: 'respond', status: 302, resumes: r.inline ? 0 : 1 });
      expect(r.headers).to.deep.equal([['Location', `/.auth/login/dev?post_login_redirect_uri=%2Fitem%2F${i}`]]);
    });
  });

  it('hands the policy every request byte as it came, whatever the bytes (quotes, backslashes, control and high bytes)', async () => {
    const hostile = [
      '"',
      '\\',
      '","x":"',
      ']]}',
      '\t',
      '\u0001\u001f',
      '\u007f',
      '\u0080\u00ff',
      'caf\u00c3\u00a9',
      '\\u0041',
      '',
    ];
    const sent: NativeRequest[] = hostile.map((text, i) => ({
      method: i % 2 === 0 ? 'GET' : `P"${text}`,
      scheme: 'http',
      host: `h${text}`,
      path: `/p/${text}`,
      query: `q=${text}`,
      remoteAddress: `r${text}`,
      headers: [
        [`X-Name${text.replace(/[^\x21-\x7e]/g, '')}`, text],
        ['X-Same', text],
        ['X-Same', `${text}${text}`],
      ],
    }));
    const seen: NativeRequest[] = [];
    attached((request) => {
      seen.push(request);
      return { kind: 'continue', remove: [], set: [] };
    });
    const results = await host.replay(sent, 4);
    for (const r of results) expect(r).to.include({ completions: 1, kind: 'continue' });
    const byPath = new Map(seen.map((request) => [request.path, request]));
    for (const request of sent) {
      expect(byPath.get(request.path), JSON.stringify(request.path)).to.deep.equal(request);
    }
  });

  it('reads every decision string exactly, at any length, and non-strings as String(value)', async () => {
    const values = ['', 'a', 'é\u00ff', 'x'.repeat(254), 'y'.repeat(255), 'z'.repeat(256), 't'.repeat(5000)];
    attached(() => ({
      kind: 'continue',
      remove: ['x-a', 7],
      set: [...values.map((v, i) => [`X-V${i}`, v]), ['X-Number', 42], ['X-Null', null]],
    }));
    const [result] = await host.replay(requests(1), 1);
    expect(result!.remove).to.deep.equal(['x-a', '7']);
    expect(result!.set).to.deep.equal([
      ...values.map((v, i) => [`X-V${i}`, v]),
      ['X-Number', '42'],
      ['X-Null', 'null'],
    ]);
  });

  it('promises settling in any order: each request gets the decision of its own promise', async () => {
    attached(async (request) => {
      // Later requests often settle first: the waiting requests are matched by number, not by order.
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 6)));
      if (request.path.endsWith('3')) throw new Error('refused');
      return { kind: 'continue', remove: [], set: [['X-PLATFORM-CLIENT-PRINCIPAL-ID', request.path.slice(6)]] };
    });
    const results = await host.replay(requests(256), 32);
    results.forEach((r, i) => {
      if (String(i).endsWith('3')) {
        expect(r, `request ${i}`).to.include({ completions: 1, kind: 'respond', status: 500 });
      } else {
        expect(r, `request ${i}`).to.include({ completions: 1, kind: 'continue' });
        expect(r.set, `request ${i}`).to.deep.equal([['X-PLATFORM-CLIENT-PRINCIPAL-ID', String(i)]]);
      }
    });
  });

  it('a promise settling after close() changes nothing: its request was answered 503, and the next interceptor works', async () => {
    const settle: Array<() => void> = [];
    const interceptor = attached(
      () => new Promise((resolve) => settle.push(() => resolve({ kind: 'continue', remove: [], set: [] }))),
    );
    const replay = host.replay(requests(8), 8);
    while (interceptor.pendingCount() < 8) await new Promise((resolve) => setTimeout(resolve, 5));
    interceptor.close();
    const results = await replay;
    for (const release of settle) release();
    await new Promise((resolve) => setImmediate(resolve));
    for (const r of results) expect(r).to.include({ completions: 1, kind: 'respond', status: 503 });
    attached(async (request) => ({ kind: 'continue', remove: [], set: [['X-Path', request.path]] }));
    const next = await host.replay(requests(4), 2);
    next.forEach((r, i) => expect(r.set).to.deep.equal([['X-Path', `/item/${i}`]]));
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
      const interceptor = attached(policy);
      const results = await host.replay(requests(8), 4);
      interceptor.close();
      for (const r of results) {
        expect(r).to.include({ completions: 1, kind: 'respond', status: 500 });
        // JSON, and no Retry-After: a broken policy is not a condition that passes by itself.
        expect(r.headers).to.deep.equal([['Content-Type', 'application/json; charset=utf-8']]);
        expect(JSON.parse(r.body!.toString())).to.have.property('error').that.is.a('string');
      }
    }
  });

  it('close() while requests are pending answers them 503, never a hang; later requests are answered at once', async () => {
    const interceptor = attached(() => new Promise(() => undefined)); // never decides
    const replay = host.replay(requests(32), 8);
    // Each host thread waits for its request's decision, as a web-server thread would: 8 in flight.
    while (interceptor.pendingCount() < 8) await new Promise((resolve) => setTimeout(resolve, 5));
    interceptor.close();
    const results = await replay;
    for (const r of results) {
      expect(r).to.include({ completions: 1, kind: 'respond', status: 503 });
      // Those pending at close() are answered by the engine, later ones by the host itself: one shape, JSON and
      // a Retry-After (the pool is recycling).
      expect(r.headers).to.deep.equal([
        ['Content-Type', 'application/json; charset=utf-8'],
        ['Retry-After', '5'],
      ]);
      expect(JSON.parse(r.body!.toString()).error).to.be.oneOf([
        'The authentication layer is shutting down.',
        'The authentication layer is not running.',
      ]);
    }
    expect(
      results.filter((r) => JSON.parse(r.body!.toString()).error === 'The authentication layer is shutting down.'),
    ).to.have.length(8);
    expect(host.attached()).to.equal(false);
    // Detached: the host answers by itself, inline, without reaching any engine.
    const late = await host.replay(requests(4), 2);
    for (const r of late) {
      expect(r).to.include({ completions: 1, status: 503, inline: true, resumes: 0 });
      expect(JSON.parse(r.body!.toString())).to.deep.equal({ error: 'The authentication layer is not running.' });
    }
  });

  it('a host with nothing attached (Node still starting) answers 503 with Retry-After', async () => {
    expect(host.attached()).to.equal(false);
    const [r] = await host.replay(requests(1), 1);
    expect(r).to.include({ completions: 1, kind: 'respond', status: 503, inline: true });
    expect(r!.headers).to.deep.include(['Retry-After', '5']);
  });

  it('attaching replaces the previous interceptor, and closing the replaced one leaves the new one attached', async () => {
    const first = attached(() => ({ kind: 'respond', status: 401, headers: [] }));
    attached(() => ({ kind: 'respond', status: 403, headers: [] }));
    first.close();
    expect(host.attached()).to.equal(true);
    const results = await host.replay(requests(4), 2);
    for (const r of results) expect(r).to.include({ status: 403 });
  });

  it('hands over the body only under the attached path prefix (the auth routes), never the app’s', async () => {
    const seen: Array<string | null> = [];
    attached((request) => {
      seen.push(request.body ? request.body.toString() : null);
      return { kind: 'continue' };
    });
    const body = Buffer.from('{"access_token":"t"}');
    const post = (path: string): NativeRequest => ({
      method: 'POST',
      scheme: 'https',
      host: 'app.example',
      path,
      query: '',
      remoteAddress: '10.0.0.1',
      headers: [],
      body,
    });
    const results = await host.replay([post('/.auth/login/github'), post('/orders'), post('/.authx')], 1);
    expect(results.map((r) => r.bodyPassed)).to.deep.equal([true, false, false]);
    expect(seen).to.deep.equal(['{"access_token":"t"}', null, null]);
  });

  it('refuses anything but a host link', () => {
    const interceptor = createInterceptor(() => ({ kind: 'continue' }));
    open.push(interceptor);
    for (const notALink of [{}, null, 'link', Buffer.alloc(8)]) {
      expect(() => interceptor.attachHost(notALink as object, '/.auth/')).to.throw(TypeError, /host link/);
    }
    // An external of another addon is not a link either: the interceptor object itself wraps one.
    expect(() => interceptor.attachHost(host.link, 42 as unknown as string)).to.throw(TypeError);
    interceptor.close();
    expect(() => interceptor.attachHost(host.link, '/.auth/')).to.throw(/closed/);
  });

  it('does not keep the event loop alive', () => {
    const script = `const { Interceptor } = require(${JSON.stringify(ADDON_PATH)}); globalThis.keep = new Interceptor(() => ({ kind: 'continue' })); console.log('created');`;
    const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10_000 });
    expect(out.trim()).to.equal('created');
  });
});
