// The session cache in front of the token store: one store read per session
// at a time, and no read or refresh that raced a logout, or a provider's report
// of a sign-out, can put the record back.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { createLogger } from '../../../src/logging.js';
import { resolveAuthConfig } from '../../../src/core/config/auth-config.js';
import { signOutRetentionMs, type ProviderSignOut } from '../../../src/core/session/provider-sign-outs.js';
import type { SessionRecord } from '../../../src/core/session/record.js';
import { Sessions } from '../../../src/core/session/sessions.js';
import type { Provider, RefreshedTokens } from '../../../src/core/providers/provider.js';
import { FileSystemTokenStore } from '../../../src/core/token-store/filesystem.js';
import { MemoryTokenStore } from '../../../src/core/token-store/memory.js';
import { capturingLogger } from '../../support/logs.js';
import { corpConfig as config, corpDocument as document, corpSession } from '../../support/session-fixture.js';
import type { TokenStore } from '../../../src/core/token-store/token-store.js';

/** A memory store whose reads wait until the test lets them finish, counting them. */
class GatedStore<T> extends MemoryTokenStore<T> {
  reads = 0;
  #gates: Array<() => void> = [];

  override async get(id: string): Promise<T | undefined> {
    this.reads++;
    const record = await super.get(id); // read now, answered later: the race a slow disk opens
    await new Promise<void>((resolve) => this.#gates.push(resolve));
    return record;
  }

  release(): void {
    for (const open of this.#gates.splice(0)) open();
  }
}

const now = Date.now();
const record = corpSession(now);
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('session cache', () => {
  const setUp = async () => {
    const store = new GatedStore<SessionRecord>();
    const sessions = new Sessions(config, store, new Map(), createLogger('silent'));
    await store.put('s-1', record, record.expiresAt);
    return { store, sessions };
  };
  it('reads a session once for many concurrent requests, then serves it from memory', async () => {
    const { store, sessions } = await setUp();
    const loads = Array.from({ length: 20 }, () => sessions.load('s-1'));
    await settled();
    store.release();
    for (const loaded of await Promise.all(loads)) expect(loaded).to.deep.equal(record);
    expect(store.reads).to.equal(1);
    expect(await sessions.load('s-1')).to.deep.equal(record);
    expect(store.reads).to.equal(1);
  });

  it('a read that was in flight during a logout does not bring the session back', async () => {
    const { store, sessions } = await setUp();
    const before = sessions.load('s-1'); // a request that read the record just before the logout
    await settled();
    await sessions.destroy('s-1');
    store.release();
    expect(await before).to.deep.equal(record); // that request was already under way
    const replay = sessions.load('s-1'); // the copied cookie, replayed after the logout
    await settled();
    store.release();
    expect(await replay).to.equal(undefined);
    expect(store.reads).to.equal(2);
  });

  it('a read that ran while the logout was still deleting the record does not bring it back', async () => {
    const { store, sessions } = await setUp();
    let finishDelete = () => {};
    const realDelete = store.delete.bind(store);
    store.delete = async (id: string) => {
      await new Promise<void>((resolve) => (finishDelete = resolve));
      await realDelete(id);
    };
    const logout = sessions.destroy('s-1');
    const during = sessions.load('s-1'); // reads the file before it is gone
    await settled();
    store.release();
    expect(await during).to.deep.equal(record);
    finishDelete();
    await logout;
    const replay = sessions.load('s-1');
    await settled();
    store.release();
    expect(await replay).to.equal(undefined);
  });

  it('a failed read is not kept: the next request reads again', async () => {
    const { store, sessions } = await setUp();
    const realGet = store.get.bind(store);
    let fail = true;
    store.get = (id: string) => (fail ? Promise.reject(new Error('disk gone')) : realGet(id));
    await sessions.load('s-1').then(
      () => expect.fail('read'),
      (error: Error) => expect(error.message).to.equal('disk gone'),
    );
    fail = false;
    const next = sessions.load('s-1');
    await settled();
    store.release();
    expect(await next).to.deep.equal(record);
  });
});

describe("providers' sign-outs (back-channel logout) and the session cache", () => {
  const signedInAtProvider: SessionRecord = { ...record, providerSession: { sub: 'u', sid: 'p-1', issuedAt: now } };

  it('a read that was checking for sign-outs while a provider reported one is answered, but not cached: the next request finds the sign-out', async () => {
    const signOuts = new GatedStore<ProviderSignOut>();
    const store = new MemoryTokenStore<SessionRecord>();
    await store.put('s-1', signedInAtProvider, record.expiresAt);
    const sessions = new Sessions(config, store, new Map(), createLogger('silent'), Date.now, 30_000, signOuts);
    const before = sessions.load('s-1'); // has read the record, and found no sign-out yet
    await settled();
    const reported = sessions.signedOutAtProvider('corp', { sid: 'p-1', issuedAt: now + 1000 });
    await settled();
    signOuts.release();
    expect(await before).to.deep.equal(signedInAtProvider); // that request was already under way
    expect(await reported).to.equal(0); // the session was not cached yet
    const next = sessions.load('s-1');
    await settled();
    signOuts.release();
    expect(await next).to.equal(undefined);
    expect(await store.get('s-1')).to.equal(undefined); // and its record is removed
  });

  it('sign-outs are kept as long as a session made before one can last: its lifetime, the refresh extension, and the cache', () => {
    const hour = 3_600_000;
    expect(signOutRetentionMs(config, 30_000)).to.equal(8 * hour + 72 * hour + 30_000);
    const derived = resolveAuthConfig(
      {
        ...document,
        login: {
          cookieExpiration: { convention: 'IdentityProviderDerived' },
          tokenStore: { tokenRefreshExtensionHours: 0 },
        },
      },
      {},
    ).config;
    expect(signOutRetentionMs(derived, 0)).to.equal(30 * 24 * hour);
  });
});

describe('a logout while a refresh is at the provider', () => {
  const refreshable: SessionRecord = {
    ...record,
    tokens: { accessToken: 'a-1', refreshToken: 'r-1', accessTokenExpiresAt: now + 60_000 },
  };

  /** A provider whose refreshes are answered when the test says, counting them. */
  function slowProvider() {
    const pending: Array<() => void> = [];
    const provider = {
      alias: 'corp',
      calls: 0,
      refresh(): Promise<RefreshedTokens> {
        provider.calls++;
        return new Promise((resolve) =>
          pending.push(() =>
            resolve({
              accessToken: `a-${provider.calls + 1}`,
              idToken: undefined,
              refreshToken: `r-${provider.calls + 1}`,
              accessTokenExpiresAt: Date.now() + 3_600_000,
            }),
          ),
        );
      },
      answer: () => pending.splice(0).forEach((resolve) => resolve()),
      get waiting() {
        return pending.length;
      },
    };
    return provider;
  }
  async function until(condition: () => boolean): Promise<void> {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2));
  }

  const stores: Record<string, () => TokenStore<SessionRecord>> = {
    'memory store (no turns across instances)': () => new MemoryTokenStore<SessionRecord>(),
    'file store (turns by lock files)': () =>
      new FileSystemTokenStore<SessionRecord>({
        directory: mkdtempSync(path.join(os.tmpdir(), 'gatehouse-sessions-')),
        app: 'a',
        masterKey: Buffer.alloc(32, 3),
      }),
  };
  for (const [name, makeStore] of Object.entries(stores)) {
    it(`${name}: the answer that comes after the logout does not write the session back`, async () => {
      const store = makeStore();
      const provider = slowProvider();
      const sessions = new Sessions(
        config,
        store,
        new Map([['corp', provider as unknown as Provider]]),
        createLogger('silent'),
      );
      await store.put('s-1', refreshable, refreshable.expiresAt);
      const refreshing = sessions.refresh('s-1', refreshable);
      await until(() => provider.waiting === 1); // at the provider
      let loggedOut = false;
      const logout = sessions.destroy('s-1').then(() => (loggedOut = true));
      await settled();
      provider.answer();
      expect((await refreshing).ok).to.equal(true);
      await logout;
      expect(loggedOut).to.equal(true);
      expect(await store.get('s-1')).to.equal(undefined);
      expect(await sessions.load('s-1')).to.equal(undefined); // the copied cookie, replayed
      // A refresh asked for after the logout finds no session, and asks the provider nothing.
      expect(await sessions.refresh('s-1', refreshable)).to.deep.equal({ ok: false, reason: 'ended' });
      expect(provider.calls).to.equal(1);
    });
  }

  it('two instances sharing a file store: a logout on one waits for the refresh under way on the other', async () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-sessions-'));
    const storeOf = () =>
      new FileSystemTokenStore<SessionRecord>({ directory, app: 'a', masterKey: Buffer.alloc(32, 3) });
    const provider = slowProvider();
    const providers = new Map([['corp', provider as unknown as Provider]]);
    const [first, second] = [
      new Sessions(config, storeOf(), providers, createLogger('silent')),
      new Sessions(config, storeOf(), providers, createLogger('silent')),
    ];
    await storeOf().put('s-1', refreshable, refreshable.expiresAt);
    const refreshing = first.refresh('s-1', refreshable);
    await until(() => provider.waiting === 1);
    const logout = second.destroy('s-1');
    await new Promise((resolve) => setTimeout(resolve, 50));
    provider.answer();
    await Promise.all([refreshing, logout]);
    expect(await storeOf().get('s-1')).to.equal(undefined);
    expect(await second.load('s-1')).to.equal(undefined);
    rmSync(directory, { recursive: true, force: true });
  });
});

describe('a refresh the store fails to keep (a full disk, say)', () => {
  const refreshable: SessionRecord = {
    ...record,
    tokens: { accessToken: 'a-1', refreshToken: 'r-1', accessTokenExpiresAt: now + 60_000 },
  };
  /** A provider that rotates refresh tokens, as oidc-provider does: each refresh token is good once. */
  function rotatingProvider() {
    const provider = {
      alias: 'corp',
      redeemed: [] as string[],
      async refresh(refreshToken: string): Promise<RefreshedTokens> {
        if (provider.redeemed.includes(refreshToken))
          throw Object.assign(new Error('grant revoked'), { name: 'ProviderRefusedError' });
        provider.redeemed.push(refreshToken);
        const next = provider.redeemed.length + 1;
        return {
          accessToken: `a-${next}`,
          idToken: undefined,
          refreshToken: `r-${next}`,
          accessTokenExpiresAt: Date.now() + 3_600_000,
        };
      },
    };
    return provider;
  }
  /** Makes a store refuse writes while `full` is set, as a full disk does. */
  function failingWrites<S extends TokenStore<SessionRecord>>(store: S): S & { full: boolean } {
    const failing = Object.assign(store, { full: false });
    const put = store.put.bind(store);
    failing.put = async (id, value, expiresAt) => {
      if (failing.full) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      return put(id, value, expiresAt);
    };
    return failing;
  }
  const stores: Record<string, () => TokenStore<SessionRecord>> = {
    'memory store': () => new MemoryTokenStore<SessionRecord>(),
    'file store': () =>
      new FileSystemTokenStore<SessionRecord>({
        directory: mkdtempSync(path.join(os.tmpdir(), 'gatehouse-sessions-')),
        app: 'a',
        masterKey: Buffer.alloc(32, 3),
      }),
  };
  for (const [name, makeStore] of Object.entries(stores)) {
    it(`${name}: the rotated tokens are served from memory and stored once the store takes them again; the session goes on`, async () => {
      const store = failingWrites(makeStore());
      const provider = rotatingProvider();
      const logs = capturingLogger();
      // No session cache: every request reads the store, so only the kept refresh can answer.
      const sessions = new Sessions(
        config,
        store,
        new Map([['corp', provider as unknown as Provider]]),
        logs.logger,
        Date.now,
        0,
      );
      await store.put('s-1', refreshable, refreshable.expiresAt);
      store.full = true;
      const first = await sessions.refresh('s-1', refreshable);
      expect(first.ok).to.equal(true);
      expect((await store.get('s-1'))!.tokens.refreshToken, 'not stored').to.equal('r-1');
      expect(
        logs.lines().some((line) => line.level === 50 && /refreshed session not stored/.test(String(line.msg))),
      ).to.equal(true);
      const served = await sessions.load('s-1');
      expect(served!.tokens).to.include({ accessToken: 'a-2', refreshToken: 'r-2' });
      // The next refresh redeems the rotated token, not the one the provider already took (which would end the grant).
      expect((await sessions.refresh('s-1', served!)).ok).to.equal(true);
      expect(provider.redeemed).to.deep.equal(['r-1', 'r-2']);
      store.full = false;
      expect((await sessions.load('s-1'))!.tokens.refreshToken).to.equal('r-3');
      expect((await store.get('s-1'))!.tokens.refreshToken, 'stored on the next read').to.equal('r-3');
    });

    it(`${name}: a logout ends a session whose refresh was not stored: nothing brings it back from memory`, async () => {
      const store = failingWrites(makeStore());
      const sessions = new Sessions(
        config,
        store,
        new Map([['corp', rotatingProvider() as unknown as Provider]]),
        createLogger('silent'),
        Date.now,
        0,
      );
      await store.put('s-1', refreshable, refreshable.expiresAt);
      store.full = true;
      expect((await sessions.refresh('s-1', refreshable)).ok).to.equal(true);
      await sessions.destroy('s-1');
      store.full = false;
      expect(await sessions.load('s-1')).to.equal(undefined);
      expect(await store.get('s-1')).to.equal(undefined);
      expect(await sessions.refresh('s-1', refreshable)).to.deep.equal({ ok: false, reason: 'ended' });
    });
  }

  it('two instances sharing a file store: a logout on one ends the session whose refresh the other keeps in memory (it is not written back)', async () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-sessions-'));
    const store = failingWrites(
      new FileSystemTokenStore<SessionRecord>({ directory, app: 'a', masterKey: Buffer.alloc(32, 3) }),
    );
    const providers = new Map([['corp', rotatingProvider() as unknown as Provider]]);
    const [keeping, other] = [0, 1].map(
      () => new Sessions(config, store, providers, createLogger('silent'), Date.now, 0),
    );
    await store.put('s-1', refreshable, refreshable.expiresAt);
    store.full = true;
    expect((await keeping!.refresh('s-1', refreshable)).ok).to.equal(true); // kept in memory there
    await other!.destroy('s-1');
    store.full = false;
    expect(await keeping!.load('s-1')).to.equal(undefined);
    expect(await store.get('s-1')).to.equal(undefined);
    expect(await other!.load('s-1')).to.equal(undefined); // the copied cookie, replayed on either instance
    rmSync(directory, { recursive: true, force: true });
  });

  it('two instances: a read that found the session just before a logout on the other does not write the kept refresh back after it', async () => {
    const store = failingWrites(new MemoryTokenStore<SessionRecord>());
    // The keeping instance's reads, while held, are read at once and answered when the test says.
    const held = { on: false, answer: () => {} };
    const gated: TokenStore<SessionRecord> = {
      get: async (id) => {
        const record = await store.get(id);
        if (held.on) await new Promise<void>((resolve) => (held.answer = resolve));
        return record;
      },
      put: (id, record, expiresAt) => store.put(id, record, expiresAt),
      delete: (id) => store.delete(id),
      sweep: () => store.sweep(),
      exclusive: (id, work) => store.exclusive(id, work),
    };
    const providers = new Map([['corp', rotatingProvider() as unknown as Provider]]);
    const keeping = new Sessions(config, gated, providers, createLogger('silent'), Date.now, 0);
    const other = new Sessions(config, store, providers, createLogger('silent'), Date.now, 0);
    await store.put('s-1', refreshable, refreshable.expiresAt);
    store.full = true;
    expect((await keeping.refresh('s-1', refreshable)).ok).to.equal(true); // kept in memory there
    store.full = false;
    held.on = true;
    const read = keeping.load('s-1'); // finds the record still stored...
    await settled();
    await other.destroy('s-1'); // ...and the logout on the other instance ends it before the write's turn
    held.on = false;
    held.answer();
    await read;
    expect(await store.get('s-1'), 'written back').to.equal(undefined);
    expect(await other.load('s-1')).to.equal(undefined);
    expect(await keeping.load('s-1')).to.equal(undefined);
  });
});
