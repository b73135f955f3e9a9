// login.cookieExpiration.inactivityTimeout: a session unused for longer needs a new sign-in.
// Two instances share the session's last use through the token store (a directory, a real
// redis-server), written at most once a minute: a request costs no store write.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { AuthConfigError, resolveAuthConfig } from '../../../src/core/config/auth-config.js';
import type { Provider } from '../../../src/core/providers/provider.js';
import { SessionActivity, type LastSeen } from '../../../src/core/session/activity.js';
import type { SessionRecord } from '../../../src/core/session/record.js';
import { Sessions } from '../../../src/core/session/sessions.js';
import { FileSystemTokenStore } from '../../../src/core/token-store/filesystem.js';
import { MemoryTokenStore } from '../../../src/core/token-store/memory.js';
import { RedisLink } from '../../../src/core/token-store/redis-link.js';
import { RedisTokenStore } from '../../../src/core/token-store/redis.js';
import type { TokenStore } from '../../../src/core/token-store/token-store.js';
import { createLogger } from '../../../src/logging.js';
import { startRedis, type TestRedis } from '../../support/redis-server.js';
import { corpDocument, corpSession } from '../../support/session-fixture.js';

const MINUTE = 60_000;
const IDLE = 30 * MINUTE;
const HOST = 'app.example';
const logger = createLogger('silent');

function configWith(cookieExpiration: Record<string, unknown>) {
  return resolveAuthConfig({ ...corpDocument, login: { cookieExpiration } }, {}).config;
}
const config = configWith({ inactivityTimeout: '00:30:00', timeToExpiration: '1.00:00:00' });
const providers = new Map([['corp', { fingerprint: 'fp' } as Provider]]);

/** A last-seen store that counts what is asked of it. */
function counted(store: TokenStore<LastSeen>) {
  const counts = { reads: 0, writes: 0 };
  const wrapped: TokenStore<LastSeen> = {
    get: (id) => (counts.reads++, store.get(id)),
    put: (id, record, expiresAt) => (counts.writes++, store.put(id, record, expiresAt)),
    delete: (id) => store.delete(id),
    sweep: () => store.sweep(),
  };
  return { counts, store: wrapped };
}

interface Backing {
  /** A last-seen store over the shared backing, as one instance opens it. */
  open(now: () => number): Promise<TokenStore<LastSeen>>;
  close(): Promise<void>;
}

const backings: Record<string, () => Promise<Backing>> = {
  filesystem: async () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-idle-'));
    const masterKey = randomBytes(32);
    return {
      open: async (now) => {
        const store = new FileSystemTokenStore<LastSeen>({ directory, app: 'default', masterKey, logger, now });
        await store.prepare();
        return store;
      },
      close: async () => rmSync(directory, { recursive: true, force: true }),
    };
  },
  'redis-server': async () => {
    const redis: TestRedis = await startRedis();
    const masterKey = randomBytes(32);
    const links: RedisLink[] = [];
    return {
      open: async (now) => {
        const link = new RedisLink({ url: new URL(redis.url), prefix: 'idle:', logger });
        links.push(link);
        expect(await link.open(5_000)).to.equal(true);
        return new RedisTokenStore<LastSeen>({ link, kind: 'lastseen', app: 'default', masterKey, logger, now });
      },
      close: async () => {
        await Promise.all(links.map((link) => link.close()));
        await redis.stop();
      },
    };
  },
};

for (const [kind, makeBacking] of Object.entries(backings)) {
  describe(`session idle timeout, last use shared through the ${kind} store`, function () {
    this.timeout(20_000);
    let backing: Backing;
    let clock: number;
    const now = () => clock;
    const sessionStore = new MemoryTokenStore<SessionRecord>(() => clock);

    before(async () => {
      backing = await makeBacking();
    });
    after(() => backing.close());

    /** One gatehouse instance: its sessions over the shared session store, its activity over the shared backing. */
    async function instance() {
      const lastSeen = counted(await backing.open(now));
      const activity = new SessionActivity(IDLE, lastSeen.store, logger, now);
      const sessions = new Sessions(
        config,
        sessionStore,
        providers,
        logger,
        now,
        30_000,
        undefined,
        undefined,
        undefined,
        activity,
      );
      return { sessions, counts: lastSeen.counts };
    }

    /** What a request of the session finds: valid, or why it needs a new sign-in. */
    async function request(sessions: Sessions, id: string): Promise<string> {
      const assessment = sessions.assess(await sessions.load(id), HOST);
      return assessment.kind === 'reauth' ? assessment.reason : assessment.kind;
    }

    beforeEach(() => {
      clock = Date.now();
    });

    it('a session in use stays signed in for as long as it lasts; unused for longer than the timeout, it needs a new sign-in', async () => {
      const a = await instance();
      const id = await a.sessions.create(corpSession(clock, { expiresAt: clock + 24 * 60 * MINUTE }));
      for (let minutes = 0; minutes < 120; minutes += 10) {
        clock += 10 * MINUTE;
        expect(await request(a.sessions, id), `after ${minutes + 10} minutes`).to.equal('valid');
      }
      clock += IDLE + MINUTE;
      expect(await request(a.sessions, id)).to.equal('idle-timeout');
      // Once found idle, it stays so (the layer then ends it).
      expect(await request(a.sessions, id)).to.equal('idle-timeout');
      // Another instance, which never saw the session, finds it idle too.
      const b = await instance();
      expect(await request(b.sessions, id)).to.equal('idle-timeout');
    });

    it('just within the timeout the session goes on; just past it, not', async () => {
      const a = await instance();
      const id = await a.sessions.create(corpSession(clock));
      clock += IDLE;
      expect(await request(a.sessions, id)).to.equal('valid');
      clock += IDLE + 1;
      expect(await request(a.sessions, id)).to.equal('idle-timeout');
    });

    it('no store write per request: the last use is written at most once a minute', async () => {
      const a = await instance();
      const id = await a.sessions.create(corpSession(clock));
      for (let i = 0; i < 199; i++) {
        clock += 300;
        expect(await request(a.sessions, id)).to.equal('valid');
      }
      expect(a.counts.writes, 'within the first minute').to.equal(0);
      for (let i = 0; i < 801; i++) {
        clock += 300;
        expect(await request(a.sessions, id)).to.equal('valid');
      }
      // 1000 requests over five minutes: one write a minute.
      expect(a.counts.writes).to.equal(5);
      // And read once, when the instance first met the session.
      expect(a.counts.reads).to.equal(1);
    });

    it('a session in use at another instance is not idle here: the store is read when this instance would find it idle', async () => {
      const a = await instance();
      const b = await instance();
      const id = await a.sessions.create(corpSession(clock, { expiresAt: clock + 24 * 60 * MINUTE }));
      clock += MINUTE;
      expect(await request(b.sessions, id)).to.equal('valid');
      expect(b.counts.reads).to.equal(1);
      // The user goes on at instance A for two hours.
      for (let minutes = 0; minutes < 120; minutes += 5) {
        clock += 5 * MINUTE;
        expect(await request(a.sessions, id)).to.equal('valid');
      }
      // Then a request reaches B, which last saw the session two hours ago.
      clock += 5 * MINUTE;
      expect(await request(b.sessions, id)).to.equal('valid');
      expect(b.counts.reads).to.equal(2);
      // Each of B's two uses came a minute or more after the last one stored: each is written.
      expect(b.counts.writes).to.equal(2);
    });

    it('an idle session past its end is not renewable within the refresh extension (the reason is the idle timeout)', async () => {
      const a = await instance();
      const id = await a.sessions.create(corpSession(clock, { expiresAt: clock + 10 * MINUTE }));
      clock += IDLE + MINUTE;
      expect(await request(a.sessions, id)).to.equal('idle-timeout');
    });
  });
}

describe('login.cookieExpiration.inactivityTimeout', () => {
  it('is off unless set: a session unused for a day within its lifetime stays signed in', async () => {
    const plain = configWith({ timeToExpiration: '7.00:00:00' });
    expect(plain.cookieExpiration.idleTimeoutMs).to.equal(undefined);
    let clock = Date.now();
    const store = new MemoryTokenStore<SessionRecord>(() => clock);
    const sessions = new Sessions(plain, store, providers, logger, () => clock);
    const id = await sessions.create(corpSession(clock, { expiresAt: clock + 7 * 24 * 60 * MINUTE }));
    clock += 24 * 60 * MINUTE;
    expect(sessions.assess(await sessions.load(id), HOST).kind).to.equal('valid');
  });

  it('is a time span of at least a minute', () => {
    expect(configWith({ inactivityTimeout: '00:15:00' }).cookieExpiration.idleTimeoutMs).to.equal(15 * MINUTE);
    expect(() => configWith({ inactivityTimeout: '00:00:30' }))
      .to.throw(AuthConfigError)
      .with.property('problems')
      .that.deep.equals(['login.cookieExpiration.inactivityTimeout: expected at least 00:01:00']);
    expect(() => configWith({ inactivityTimeout: '15' })).to.throw(
      AuthConfigError,
      /inactivityTimeout: expected a time span/,
    );
  });
});
