// Sessions under every interleaving fast-check's scheduler picks: requests (reads, refreshes,
// logouts, a provider's back-channel sign-out) on one or two instances sharing a store, with the
// store's answers, its writes and the provider's answers arriving in any order, and the store
// refusing writes now and then (a full disk). What must hold whatever the order:
// - no refresh token is redeemed twice (a rotating provider would revoke the whole grant);
// - a session signed out stays signed out: once the logout has answered, no read finds it, no
//   refresh renews it, and nothing writes it back to the store;
// - a session that was not signed out can still be refreshed at the end (no refresh was lost);
// - every request is answered (no turn is left held).
import { expect } from 'chai';
import fc from 'fast-check';

import { createLogger } from '../../../src/logging.js';
import type { ProviderSignOut } from '../../../src/core/session/provider-sign-outs.js';
import type { SessionRecord } from '../../../src/core/session/record.js';
import { Sessions } from '../../../src/core/session/sessions.js';
import type { Provider, RefreshedTokens } from '../../../src/core/providers/provider.js';
import { MemoryTokenStore } from '../../../src/core/token-store/memory.js';
import type { TokenStore } from '../../../src/core/token-store/token-store.js';
import { corpConfig as config, corpSession } from '../../support/session-fixture.js';

const ID = 's-1';
const NOW = Date.UTC(2026, 10, 24);
const signedIn = corpSession(NOW, {
  tokens: { accessToken: 'a-1', refreshToken: 'r-1', accessTokenExpiresAt: NOW + 60_000 },
  providerSession: { sub: 'u', sid: 'p-1', issuedAt: NOW },
});

type Request = 'load' | 'refresh' | 'logout' | 'provider-sign-out' | 'disk-full' | 'disk-freed';
interface Step {
  readonly instance: 0 | 1;
  readonly request: Request;
}

/** A memory store shared by the instances, whose answers and writes the scheduler orders. */
function scheduledStore<T>(
  s: fc.Scheduler,
  shared: MemoryTokenStore<T>,
  disk: { full: boolean },
  events: string[],
  turns: boolean,
): TokenStore<T> {
  return {
    // Read when asked, answered later: the stale answer a slow disk gives.
    get: (id) => s.schedule(shared.get(id), 'get'),
    // Written later, or refused as a full disk refuses it.
    put: (id, record, expiresAt) =>
      s.schedule(Promise.resolve(), 'put').then(() => {
        if (disk.full) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
        events.push('put');
        return shared.put(id, record, expiresAt);
      }),
    delete: (id) => s.schedule(Promise.resolve(), 'delete').then(() => shared.delete(id)),
    sweep: () => shared.sweep(),
    // A store need not offer turns (the interface makes them optional): refreshes then take turns within the process only.
    ...(turns ? { exclusive: <R>(id: string, work: () => Promise<R>) => shared.exclusive(id, work) } : {}),
  };
}

/** Rotates refresh tokens as oidc-provider does: each is good once, and its answer comes when the scheduler says. */
function rotatingProvider(s: fc.Scheduler) {
  const provider = {
    alias: 'corp',
    fingerprint: 'fp',
    issued: ['r-1'],
    redeemed: [] as string[],
    spentRedeemed: [] as string[],
    refresh(refreshToken: string): Promise<RefreshedTokens> {
      if (provider.redeemed.includes(refreshToken)) {
        provider.spentRedeemed.push(refreshToken);
        return s.schedule(
          Promise.reject(Object.assign(new Error('grant revoked'), { name: 'ProviderRefusedError' })),
          'refresh refused',
        );
      }
      provider.redeemed.push(refreshToken);
      const next = provider.issued.length + 1;
      provider.issued.push(`r-${next}`);
      return s.schedule(
        Promise.resolve({
          accessToken: `a-${next}`,
          idToken: undefined,
          refreshToken: `r-${next}`,
          accessTokenExpiresAt: NOW + 3_600_000,
        }),
        'refresh',
      );
    },
  };
  return provider;
}

interface Deployment {
  readonly instances: 1 | 2;
  /** The store refuses writes between a `disk-full` and a `disk-freed` request. */
  readonly failures: boolean;
  /** Whether the store offers turns (`exclusive`); gatehouse's own stores do. */
  readonly turns: boolean;
}

const steps = ({ instances, failures }: Deployment) =>
  fc.array(
    fc.record({
      instance: instances === 2 ? fc.constantFrom<0 | 1>(0, 1) : fc.constant<0 | 1>(0),
      request: fc.constantFrom<Request>(
        'load',
        'load',
        'refresh',
        'refresh',
        'refresh',
        'logout',
        'provider-sign-out',
        ...(failures ? (['disk-full', 'disk-freed'] as const) : []),
      ),
    }),
    { minLength: 1, maxLength: 10 },
  );

async function runScenario(
  s: fc.Scheduler,
  { instances, failures, turns }: Deployment,
  cacheTtlMs: number,
  plan: readonly Step[],
): Promise<void> {
  // A refresh the store refused is kept by the instance that made it; the others still have the
  // replaced refresh token, and may redeem it (refused: documented). Sign-outs hold regardless.
  const refreshesShared = instances === 1 || !failures;
  const disk = { full: false };
  const events: string[] = [];
  const shared = new MemoryTokenStore<SessionRecord>(() => NOW);
  await shared.put(ID, signedIn, signedIn.expiresAt);
  const signOuts = new MemoryTokenStore<ProviderSignOut>(() => NOW);
  const provider = rotatingProvider(s);
  const providers = new Map([['corp', provider as unknown as Provider]]);
  const sessions = Array.from(
    { length: instances },
    () =>
      new Sessions(
        config,
        scheduledStore(s, shared, disk, events, turns),
        providers,
        createLogger('silent'),
        () => NOW,
        cacheTtlMs,
        scheduledStore(s, signOuts, { full: false }, [], turns),
      ),
  );

  let ended = false; // a logout or a provider's sign-out has answered
  let loggedOutAt: number | undefined; // events.length when the first logout answered
  const endedOn = new Set<number>(); // the instances that answered one
  const violations: string[] = [];
  const run = async (step: Step, index: number): Promise<void> => {
    const at = sessions[step.instance]!;
    const afterEnd = endedOn.has(step.instance); // this request began after this instance signed the session out
    const label = `#${index} ${step.request} on ${step.instance}`;
    switch (step.request) {
      case 'disk-full':
      case 'disk-freed':
        disk.full = step.request === 'disk-full';
        return;
      case 'load': {
        const record = await at.load(ID);
        // Another instance may serve its cached copy for up to the cache's lifetime (documented), or
        // share a read that began before the end: it answers as a request that came a moment earlier.
        if (afterEnd && record !== undefined) violations.push(`${label}: found the signed-out session`);
        return;
      }
      case 'refresh': {
        const record = await at.load(ID);
        if (record === undefined) return;
        const outcome = await at.refresh(ID, record);
        if (afterEnd && outcome.ok) violations.push(`${label}: renewed the signed-out session`);
        return;
      }
      case 'logout':
        await at.destroy(ID);
        loggedOutAt ??= events.length;
        break;
      case 'provider-sign-out':
        // Kept for every instance; a refresh under way elsewhere may still write the record, which the next read then removes.
        await at.signedOutAtProvider('corp', { sid: 'p-1', issuedAt: NOW + 1000 });
        break;
    }
    endedOn.add(step.instance);
    ended = true;
  };
  // Each request starts when the scheduler says, so starts interleave with answers too.
  const requests = plan.map((step, index) =>
    s.schedule(Promise.resolve(), `start #${index}`).then(() => run(step, index)),
  );
  await s.waitFor(Promise.all(requests));

  if (refreshesShared)
    expect(provider.spentRedeemed, 'refresh tokens redeemed after they were spent').to.deep.equal([]);
  expect(violations.join('; ')).to.equal('');

  disk.full = false;
  if (ended) {
    if (loggedOutAt !== undefined) expect(events.slice(loggedOutAt), 'writes after the logout').to.deep.equal([]);
    // A provider sign-out is found (and the record removed) by the next read; a logout removed it already.
    // Another instance may serve its cached copy for up to the cache's lifetime (documented).
    for (const [index, instance] of sessions.entries()) {
      const record = await s.waitFor(instance.load(ID));
      if (cacheTtlMs === 0 || endedOn.has(index)) expect(record, `read after the end on ${index}`).to.equal(undefined);
    }
    expect(await shared.get(ID), 'stored after the end').to.equal(undefined);
    return;
  }
  if (!refreshesShared) return;
  // Not signed out: the session is still good at the provider from every instance.
  for (const instance of sessions) {
    const record = await s.waitFor(instance.load(ID));
    expect(record, 'the session after the requests').to.not.equal(undefined);
    const outcome = await s.waitFor(instance.refresh(ID, record!));
    expect(outcome.ok, `a refresh at the end (${JSON.stringify(outcome)})`).to.equal(true);
  }
  expect(provider.spentRedeemed, 'refresh tokens redeemed after they were spent, at the end').to.deep.equal([]);
  expect((await shared.get(ID))?.tokens.refreshToken, 'the stored refresh token is the newest').to.equal(
    provider.issued.at(-1),
  );
}

describe('sessions under every interleaving of requests, store and provider (property)', function () {
  this.timeout(120_000);
  const RUNS = 2000;
  const cases: Array<[string, Deployment, readonly number[]]> = [
    [
      'one instance, the store refusing writes now and then',
      { instances: 1, failures: true, turns: true },
      [0, 30_000],
    ],
    ['one instance, a store without turns', { instances: 1, failures: true, turns: false }, [0, 30_000]],
    [
      'two instances sharing the store (turns through the store), no cache',
      { instances: 2, failures: false, turns: true },
      [0],
    ],
    [
      'two instances sharing the store, each caching what it read',
      { instances: 2, failures: false, turns: true },
      [30_000],
    ],
    [
      'two instances sharing a store that refuses writes now and then: sign-outs still hold',
      { instances: 2, failures: true, turns: true },
      [0, 30_000],
    ],
  ];
  for (const [name, deployment, cacheTtls] of cases) {
    it(name, async () => {
      await fc.assert(
        fc.asyncProperty(fc.scheduler(), fc.constantFrom(...cacheTtls), steps(deployment), (s, ttl, plan) =>
          runScenario(s, deployment, ttl, plan),
        ),
        { numRuns: RUNS },
      );
    });
  }
});
