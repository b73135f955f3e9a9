// The batched crossing (binding/addon/interceptor.cpp, pending_queue.h): native
// host threads queue requests, and one wake of the JavaScript thread takes
// every request queued so far. These tests make batches happen on purpose (the
// policy holds the JavaScript thread until every host thread has queued its
// request) and check what batching could break: one answer per request, each
// its own, through a shutdown in the middle of a batch and a teardown with
// requests still queued; and the queue's coalescing rule itself, under
// ThreadSanitizer.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import type { NativeDecision, NativeRequest } from '../../src/inserver/policy.js';
import { ADDON_PATH } from '../../src/native/addon.js';
import { createInterceptor, type InterceptorPolicy, type NativeInterceptor } from '../../src/native/interceptor.js';
import { loadModuleHost, MODULE_HOST_PATH } from '../../src/native/module-host.js';

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

/** Holds the JavaScript thread (as a slow decision would) until `ready()` or `ms` pass. */
function holdUntil(ready: () => boolean, ms: number): void {
  const until = Date.now() + ms;
  while (!ready() && Date.now() < until) {
    // spin: nothing else may run on this thread meanwhile
  }
}

const indexOf = (request: NativeRequest) => Number(request.path.slice('/item/'.length));

describe('the batched crossing (native threads → one wake of the JavaScript thread per batch)', () => {
  const host = loadModuleHost();
  const open: NativeInterceptor[] = [];
  const attached = (policy: InterceptorPolicy) => {
    const interceptor = createInterceptor(policy);
    interceptor.attachHost(host.link, '/.auth/');
    open.push(interceptor);
    return interceptor;
  };
  afterEach(() => {
    for (const interceptor of open.splice(0)) interceptor.close();
  });

  it('64 threads queued behind a busy JavaScript thread: one batch, every request its own answer, once (sync, promised, respond and throw mixed)', async () => {
    const threads = 64;
    let calls = 0;
    // Each request's answer names it; which kind of answer depends on its number, so a decision
    // handed to the wrong request within a batch shows.
    const answer = (i: number): NativeDecision | Promise<NativeDecision> => {
      const decision: NativeDecision =
        i % 5 === 0
          ? {
              kind: 'respond',
              status: 400 + (i % 100),
              headers: [['X-For', String(i)]],
              body: Buffer.from(`body ${i}`),
            }
          : { kind: 'continue', remove: [`x-remove-${i}`], set: [['X-PLATFORM-CLIENT-PRINCIPAL-ID', String(i)]] };
      if (i % 3 === 0) return decision;
      if (i % 3 === 1) return Promise.resolve(decision);
      return new Promise((resolve) => setTimeout(() => resolve(decision), i % 4));
    };
    const interceptor = attached((request) => {
      const i = indexOf(request);
      // The first request holds the JavaScript thread until every other thread has submitted
      // (the engine counts them) and had time to queue: they all cross in the next wake.
      if (++calls === 1) (holdUntil(() => interceptor.pendingCount() >= threads, 5000), holdUntil(() => false, 30));
      if (i % 7 === 6) throw new Error(`refused ${i}`);
      return answer(i);
    });
    const results = await host.replay(requests(threads * 4), threads);
    const stats = interceptor.crossingStats();
    expect(stats.requests).to.equal(threads * 4);
    expect(stats.largestBatch, JSON.stringify(stats)).to.be.greaterThan(threads / 2);
    expect(stats.batches).to.be.lessThan(stats.requests);
    results.forEach((r, i) => {
      expect(r, `request ${i}`).to.include({ completions: 1, resumes: r.inline ? 0 : 1 });
      if (i % 7 === 6) {
        expect(r, `request ${i}`).to.include({ kind: 'respond', status: 500 });
      } else if (i % 5 === 0) {
        expect(r, `request ${i}`).to.include({ kind: 'respond', status: 400 + (i % 100) });
        expect(r.headers, `request ${i}`).to.deep.equal([['X-For', String(i)]]);
        expect(r.body!.toString(), `request ${i}`).to.equal(`body ${i}`);
      } else {
        expect(r, `request ${i}`).to.include({ kind: 'continue' });
        expect(r.remove, `request ${i}`).to.deep.equal([`x-remove-${i}`]);
        expect(r.set, `request ${i}`).to.deep.equal([['X-PLATFORM-CLIENT-PRINCIPAL-ID', String(i)]]);
      }
    });
  });

  it('repeated replays from 8 threads: every request reaches the policy exactly once, with its own answer', async () => {
    const seen: number[] = [];
    attached((request) => {
      seen.push(indexOf(request));
      return { kind: 'continue', remove: [], set: [['X-Path', request.path]] };
    });
    for (const round of [0, 1]) {
      seen.length = 0;
      const results = await host.replay(requests(512), 8);
      expect(
        seen.slice().sort((a, b) => a - b),
        `round ${round}`,
      ).to.deep.equal(Array.from({ length: 512 }, (_, i) => i));
      results.forEach((r, i) =>
        expect(r.set, `round ${round}, request ${i}`).to.deep.equal([['X-Path', `/item/${i}`]]),
      );
    }
  });

  it('close() from a policy in the middle of a batch: the policy is not called again, what was not delivered answers 503, each request once', async () => {
    const threads = 64;
    const closeAt = 10;
    let calls = 0;
    const interceptor = attached((request) => {
      calls++;
      if (calls === 1) (holdUntil(() => interceptor.pendingCount() >= threads, 5000), holdUntil(() => false, 30));
      if (calls === closeAt) interceptor.close();
      return { kind: 'continue', remove: [], set: [['X-Path', request.path]] };
    });
    const results = await host.replay(requests(threads), threads);
    expect(calls, 'policy calls').to.equal(closeAt);
    // A batch's decisions are delivered after the batch's call returns, so those made before close() in
    // the same batch were not yet, and answer 503 like the rest (a promised decision settles after the
    // batch anyway); only a batch before close()'s (often none: the first wake already takes many) delivered.
    const decided = results.filter((r) => r.kind === 'continue');
    const refused = results.filter((r) => r.kind === 'respond');
    expect(decided.length).to.be.within(0, closeAt - 1);
    expect(refused.length).to.be.at.least(threads - closeAt + 1);
    expect(decided.length + refused.length).to.equal(threads);
    for (const r of results) expect(r).to.include({ completions: 1, resumes: r.inline ? 0 : 1 });
    results.forEach((r, i) => {
      if (r.kind === 'continue') expect(r.set, `request ${i}`).to.deep.equal([['X-Path', `/item/${i}`]]);
      else
        expect(JSON.parse(r.body!.toString()).error, `request ${i}`).to.equal(
          'The authentication layer is shutting down.',
        );
    });
  });

  it('close() while a whole batch waits on promises: each answered 503 once, the late settlements change nothing', async () => {
    const settle: Array<() => void> = [];
    const interceptor = attached(
      (request) =>
        new Promise((resolve) =>
          settle.push(() => resolve({ kind: 'continue', remove: [], set: [['X-Path', request.path]] })),
        ),
    );
    const replay = host.replay(requests(32), 32);
    holdUntil(() => interceptor.pendingCount() >= 32, 5000); // all queued behind this (busy) thread
    while (settle.length < 32) await new Promise((resolve) => setTimeout(resolve, 2));
    interceptor.close();
    for (const release of settle) release();
    const results = await replay;
    for (const r of results) expect(r).to.include({ completions: 1, kind: 'respond', status: 503 });
  });

  it('the process ends (process.exit in a policy) with requests still queued: each host thread is answered, no crash', function () {
    this.timeout(20_000);
    const script = `
      const { Interceptor } = require(${JSON.stringify(ADDON_PATH)});
      const host = require(${JSON.stringify(MODULE_HOST_PATH)});
      let calls = 0;
      const interceptor = new Interceptor(() => {
        if (++calls === 1) {
          const until = Date.now() + 5000;
          while (interceptor.pendingCount() < 32 && Date.now() < until) {}
          const pause = Date.now() + 30;
          while (Date.now() < pause) {}
          console.log('queued ' + interceptor.pendingCount());
          process.exit(0);
        }
        return { kind: 'continue' };
      });
      interceptor.attachHost(host.link, '/.auth/');
      host.replay(Array.from({ length: 32 }, (_, i) => ({ method: 'GET', scheme: 'http', host: 'h', path: '/' + i, query: '', remoteAddress: '', headers: [] })), 32);
    `;
    for (let run = 0; run < 3; run++) {
      const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 15_000 });
      expect(child.signal, child.stderr).to.equal(null);
      expect(child.status, child.stderr).to.equal(0);
      expect(child.stdout.trim()).to.equal('queued 32');
    }
  });

  it('the queue and its coalescing rule under ThreadSanitizer: 64 producers, each item taken once, in order, none left behind', function () {
    this.timeout(60_000);
    const source = path.resolve('binding/host/pending_queue_stress.cpp');
    const out = path.join(mkdtempSync(path.join(os.tmpdir(), 'gatehouse-queue-')), 'pending_queue_stress');
    const compile = (flags: string[]) =>
      spawnSync('g++', ['-std=c++17', '-O1', '-g', ...flags, source, '-o', out, '-lpthread'], { encoding: 'utf8' });
    let built = compile(['-fsanitize=thread']);
    if (built.error) this.skip(); // no C++ compiler here
    if (built.status !== 0) built = compile([]); // a compiler without TSan: the checks still run
    expect(built.status, built.stderr).to.equal(0);
    const report = JSON.parse(execFileSync(out, ['64', '2000'], { encoding: 'utf8', timeout: 50_000 })) as Record<
      string,
      number | boolean
    >;
    expect(report).to.include({ items: 128_000, taken: 128_000, outOfOrder: 0, producersShort: 0, leftBehind: false });
    expect(report.wakes as number).to.be.at.most(128_000);
  });
});
