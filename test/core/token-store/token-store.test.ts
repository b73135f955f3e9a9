import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import { expect } from 'chai';

import { FileSystemTokenStore } from '../../../src/core/token-store/filesystem.js';
import { KEY_FILE_NAME } from '../../../src/core/token-store/filesystem-key-file.js';
import { STALE_LOCK_MS } from '../../../src/core/token-store/filesystem-locks.js';
import { MemoryTokenStore } from '../../../src/core/token-store/memory.js';
import { capturingLogger } from '../../support/logs.js';
import { tokenStoreConformance } from './conformance.js';

async function tempDir(): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), 'gatehouse-store-'));
}

function clock() {
  let now = 1_800_000_000_000;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

tokenStoreConformance('MemoryTokenStore', async () => {
  const c = clock();
  const store = new MemoryTokenStore<Record<string, unknown>>(c.now);
  return { store, peer: () => store, ...c };
});

tokenStoreConformance('FileSystemTokenStore', async () => {
  const c = clock();
  const directory = await tempDir();
  const masterKey = randomBytes(32);
  const open = () =>
    new FileSystemTokenStore<Record<string, unknown>>({ directory, app: 'conformance', masterKey, now: c.now });
  return {
    store: open(),
    peer: open,
    ...c,
    cleanup: () => fs.rm(directory, { recursive: true, force: true }),
  };
});

describe('FileSystemTokenStore on disk', () => {
  let directory: string;
  const later = Date.now() + 3_600_000;

  beforeEach(async () => {
    directory = await tempDir();
  });
  afterEach(() => fs.rm(directory, { recursive: true, force: true }));

  async function recordFiles(store: FileSystemTokenStore<unknown>): Promise<string[]> {
    return (await fs.readdir(store.directory)).filter((f) => f.endsWith('.session'));
  }

  it('one file per session, named by neither id nor content, holding no plaintext, mode 0600', async () => {
    const store = new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32) });
    const id = 'session-id-marker';
    await store.put(id, { accessToken: 'token-plaintext-marker' }, later);
    await store.put('other', { accessToken: 'x' }, later);
    const files = await recordFiles(store);
    expect(files).to.have.length(2);
    for (const f of files) {
      expect(f).to.match(/^[0-9a-f]{64}\.session$/);
      const text = await fs.readFile(path.join(store.directory, f), 'utf8');
      expect(text).not.to.contain('token-plaintext-marker');
      expect(text).not.to.contain(id);
      if (process.platform !== 'win32')
        expect((await fs.stat(path.join(store.directory, f))).mode & 0o777).to.equal(0o600);
    }
    expect((await fs.readdir(store.directory)).filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);
  });

  it('a tampered file is absent and logged, never a crash', async () => {
    const logs = capturingLogger('warn');
    const store = new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32), logger: logs.logger });
    await store.put('s', { v: 1 }, later);
    const [file] = await recordFiles(store);
    const full = path.join(store.directory, file!);
    const record = JSON.parse(await fs.readFile(full, 'utf8'));
    const data = Buffer.from(record.data, 'base64');
    data[0]! ^= 1;
    await fs.writeFile(full, JSON.stringify({ ...record, data: data.toString('base64') }));
    expect(await store.get('s')).to.equal(undefined);
    expect(logs.raw()).to.contain('does not decrypt');
    await fs.writeFile(full, 'not json at all');
    expect(await store.get('s')).to.equal(undefined);
    expect(logs.raw()).to.contain('unparseable');
  });

  it('an extended expiry does not decrypt (expiry is authenticated)', async () => {
    let now = 1_000;
    const store = new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32), now: () => now });
    await store.put('s', { v: 1 }, 2_000);
    const [file] = await recordFiles(store);
    const full = path.join(store.directory, file!);
    const record = JSON.parse(await fs.readFile(full, 'utf8'));
    await fs.writeFile(full, JSON.stringify({ ...record, expiresAt: 9_999_999 }));
    now = 3_000;
    expect(await store.get('s')).to.equal(undefined);
  });

  it("a file copied over another session's is absent (file name is associated data)", async () => {
    const store = new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32) });
    await store.put('victim', { who: 'victim' }, later);
    const victimFile = (await recordFiles(store))[0]!;
    await store.put('attacker', { who: 'attacker' }, later);
    const attackerFile = (await recordFiles(store)).find((f) => f !== victimFile)!;
    await fs.copyFile(path.join(store.directory, attackerFile), path.join(store.directory, victimFile));
    expect(await store.get('victim')).to.equal(undefined);
  });

  it('apps sharing a directory and key cannot read each other', async () => {
    const key = randomBytes(32);
    const a = new FileSystemTokenStore({ directory, app: 'app-a', masterKey: key });
    const b = new FileSystemTokenStore({ directory, app: 'app-b', masterKey: key });
    await a.put('same-id', { app: 'a' }, later);
    expect(await b.get('same-id')).to.equal(undefined);
    expect(a.directory).not.to.equal(b.directory);
    // Even a file planted under b's name for that id does not open.
    await b.put('same-id', { app: 'b' }, later);
    const [aFile] = await recordFiles(a);
    const [bFile] = await recordFiles(b);
    await fs.copyFile(path.join(a.directory, aFile!), path.join(b.directory, bFile!));
    expect(await b.get('same-id')).to.equal(undefined);
  });

  it('another key reads nothing', async () => {
    await new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32) }).put('s', { v: 1 }, later);
    expect(await new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32) }).get('s')).to.equal(
      undefined,
    );
  });

  it('without a key, generates a 0600 key file once and reuses it (also across instances)', async () => {
    const first = new FileSystemTokenStore({ directory, app: 'app' });
    await first.put('s', { v: 1 }, later);
    const keyFile = path.join(directory, KEY_FILE_NAME);
    expect((await fs.readFile(keyFile, 'utf8')).trim()).to.match(/^[0-9a-f]{64}$/);
    if (process.platform !== 'win32') expect((await fs.stat(keyFile)).mode & 0o777).to.equal(0o600);
    expect(await new FileSystemTokenStore({ directory, app: 'app' }).get('s')).to.deep.equal({ v: 1 });
  });

  it('a key file another instance has created but not yet written is waited for, not taken as a bad key', async () => {
    const keyFile = path.join(directory, KEY_FILE_NAME);
    await fs.writeFile(keyFile, '', { mode: 0o600 }); // created exclusively by the other instance, not yet written
    const key = randomBytes(32);
    const waiting = new FileSystemTokenStore({ directory, app: 'app' }).put('s', { v: 1 }, later);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await fs.writeFile(keyFile, `${key.toString('hex')}\n`);
    await waiting;
    // Written with the other instance's key.
    expect(await new FileSystemTokenStore({ directory, app: 'app', masterKey: key }).get('s')).to.deep.equal({ v: 1 });
  });

  it('a key file that stays empty is an error that says what to do, and is never replaced', async () => {
    const keyFile = path.join(directory, KEY_FILE_NAME);
    await fs.writeFile(keyFile, '', { mode: 0o600 });
    await new FileSystemTokenStore({ directory, app: 'app' }).get('s').then(
      () => expect.fail('should refuse'),
      (error: Error) =>
        expect(error.message).to.match(
          /is empty \(left by a start that stopped before writing it; .*\): delete it and gatehouse makes a new one$/,
        ),
    );
    expect(await fs.readFile(keyFile, 'utf8')).to.equal('');
  });

  it('refuses a key file others can read', async function () {
    if (process.platform === 'win32') this.skip();
    await fs.writeFile(path.join(directory, KEY_FILE_NAME), `${randomBytes(32).toString('hex')}\n`, { mode: 0o644 });
    await fs.chmod(path.join(directory, KEY_FILE_NAME), 0o644);
    const store = new FileSystemTokenStore({ directory, app: 'app' });
    await store.get('s').then(
      () => expect.fail('should refuse'),
      (error: Error) => expect(error.message).to.match(/readable by group or others/),
    );
  });

  it('sweep also clears unreadable records and stale temp files', async () => {
    let now = Date.now();
    const store = new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32), now: () => now });
    await store.put('live', { v: 1 }, now + 3_600_000);
    await fs.writeFile(path.join(store.directory, `${'0'.repeat(64)}.session`), 'garbage');
    const stale = path.join(store.directory, '.x.abc.tmp');
    await fs.writeFile(stale, 'partial');
    now += 120_000;
    expect(await store.sweep()).to.equal(2);
    expect(await store.get('live')).to.deep.equal({ v: 1 });
  });

  it('sweep skips an entry it cannot read (a directory named like a record), says so, and sweeps the rest', async () => {
    let now = Date.now();
    const logs = capturingLogger();
    const store = new FileSystemTokenStore({
      directory,
      app: 'app',
      masterKey: randomBytes(32),
      now: () => now,
      logger: logs.logger,
    });
    for (const id of ['a', 'b', 'c', 'd']) await store.put(id, { id }, now + 1_000);
    await store.put('live', { v: 1 }, now + 3_600_000);
    // Named to sort before and among the records (readdir order is the file system's).
    for (const name of ['0'.repeat(64), '8'.repeat(64), 'f'.repeat(64)])
      await fs.mkdir(path.join(store.directory, `${name}.session`));
    const stale = path.join(store.directory, '.x.abc.tmp');
    await fs.writeFile(stale, 'a complete record a kill left behind');
    now += 120_000;
    expect(await store.sweep()).to.equal(5); // four expired records and the temp file
    expect(await store.get('live')).to.deep.equal({ v: 1 });
    expect(logs.lines().filter((l) => l.msg === 'token store sweep skipped an entry it cannot read')).to.have.length(3);
  });

  it('a record that cannot be read is absent for its caller, and reported once as a store fault', async () => {
    const logs = capturingLogger();
    const store = new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32), logger: logs.logger });
    await store.put('s', { v: 1 }, later);
    const [file] = (await fs.readdir(store.directory)).filter((name) => name.endsWith('.session'));
    await fs.rm(path.join(store.directory, file!));
    await fs.mkdir(path.join(store.directory, file!));
    expect(await store.get('s')).to.equal(undefined);
    expect(await store.get('s')).to.equal(undefined);
    const faults = logs
      .lines()
      .filter((l) => l.msg === 'token store fault: a record cannot be read; its session is treated as signed out');
    expect(faults).to.have.length(1);
    expect(faults[0]).to.include({ code: 'EISDIR' });
  });

  describe('a store directory deleted while gatehouse runs', () => {
    it('is recreated (0700) by the next write, with a warning; what was stored before is gone', async () => {
      const logs = capturingLogger();
      const store = new FileSystemTokenStore({
        directory,
        app: 'app',
        masterKey: randomBytes(32),
        logger: logs.logger,
      });
      await store.put('before', { v: 1 }, later);
      await fs.rm(directory, { recursive: true });
      // Before the fix: ENOENT on every write, so every sign-in failed with a 500 until a restart.
      await store.put('after', { v: 2 }, later);
      expect(await store.get('after')).to.deep.equal({ v: 2 });
      expect(await store.get('before')).to.equal(undefined);
      if (process.platform !== 'win32') expect((await fs.stat(store.directory)).mode & 0o777).to.equal(0o700);
      expect(logs.lines().filter((l) => /^token store directory was missing/.test(String(l.msg)))).to.have.length(1);
    });

    it('writes that find it gone together recreate it once, and all of them land', async () => {
      const logs = capturingLogger();
      const store = new FileSystemTokenStore({
        directory,
        app: 'app',
        masterKey: randomBytes(32),
        logger: logs.logger,
      });
      await store.prepare();
      await fs.rm(directory, { recursive: true });
      await Promise.all(Array.from({ length: 8 }, (_, i) => store.put(`s${i}`, { i }, later)));
      expect(await recordFiles(store)).to.have.length(8);
      expect(logs.lines().filter((l) => /^token store directory was missing/.test(String(l.msg)))).to.have.length(1);
    });

    it('an exclusive section (a refresh) recreates it too', async () => {
      const store = new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32) });
      await store.prepare();
      await fs.rm(directory, { recursive: true });
      expect(await store.exclusive('s', async () => 'done')).to.equal('done');
      expect(await fs.readdir(store.directory)).to.deep.equal([]);
    });

    it('gets its key file back with the key in use, so a restart keeps the sessions signed in since', async () => {
      const store = new FileSystemTokenStore({ directory, app: 'app' });
      await store.prepare();
      const keyFile = path.join(directory, KEY_FILE_NAME);
      const key = await fs.readFile(keyFile, 'utf8');
      await fs.rm(directory, { recursive: true });
      await store.put('s', { v: 1 }, later);
      expect(await fs.readFile(keyFile, 'utf8')).to.equal(key);
      if (process.platform !== 'win32') expect((await fs.stat(keyFile)).mode & 0o777).to.equal(0o600);
      expect(await new FileSystemTokenStore({ directory, app: 'app' }).get('s')).to.deep.equal({ v: 1 });
    });

    it('a key given to the store (GATEHOUSE_ENCRYPTION_KEY) is never written to a file', async () => {
      const store = new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32) });
      await store.prepare();
      await fs.rm(directory, { recursive: true });
      await store.put('s', { v: 1 }, later);
      expect(await fs.readdir(directory)).to.deep.equal([path.basename(store.directory)]);
    });

    it('a key file that meanwhile holds another key is left alone and logged as an error', async () => {
      const logs = capturingLogger();
      const store = new FileSystemTokenStore({
        directory,
        app: 'app',
        masterKey: randomBytes(32),
        masterKeyFromKeyFile: true,
        logger: logs.logger,
      });
      await store.prepare();
      await fs.rm(directory, { recursive: true });
      // An instance that started in between made a key of its own.
      const other = `${randomBytes(32).toString('hex')}\n`;
      await fs.mkdir(directory);
      await fs.writeFile(path.join(directory, KEY_FILE_NAME), other, { mode: 0o600 });
      await store.put('s', { v: 1 }, later);
      expect(await fs.readFile(path.join(directory, KEY_FILE_NAME), 'utf8')).to.equal(other);
      expect(
        logs
          .lines()
          .filter((l) => l.level === 50)
          .map((l) => l.msg),
      ).to.deep.equal([
        'token store key file now holds another key than this instance uses: sessions will not carry over between instances or restarts until every instance runs with the same key (set GATEHOUSE_ENCRYPTION_KEY)',
      ]);
    });

    it('sweep finds nothing to remove and recreates it, key file included', async () => {
      const store = new FileSystemTokenStore({ directory, app: 'app' });
      await store.prepare();
      await fs.rm(directory, { recursive: true });
      expect(await store.sweep()).to.equal(0);
      expect((await fs.readdir(directory)).sort()).to.deep.equal(
        [KEY_FILE_NAME, path.basename(store.directory)].sort(),
      );
    });
  });

  describe('exclusive sections: lock files', () => {
    /** The lock file a section on `id` holds, as seen from inside it. */
    async function lockFileOf(store: FileSystemTokenStore<unknown>, id: string): Promise<string> {
      return store.exclusive(id, async () => {
        const locks = (await fs.readdir(store.directory)).filter((f) => f.endsWith('.lock'));
        expect(locks).to.have.length(1);
        return path.join(store.directory, locks[0]!);
      });
    }

    it('holds a lock file beside the record, named like it, and leaves none behind', async () => {
      const store = new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32) });
      await store.put('s', { v: 1 }, later);
      const lock = await lockFileOf(store, 's');
      expect(path.basename(lock)).to.equal(`${(await recordFiles(store))[0]}.lock`);
      expect((await fs.readdir(store.directory)).filter((f) => f.endsWith('.lock'))).to.deep.equal([]);
    });

    it("waits while another instance's lock is fresh, and goes on once it is released", async () => {
      const key = randomBytes(32);
      const store = new FileSystemTokenStore({ directory, app: 'app', masterKey: key });
      const lock = await lockFileOf(store, 's');
      await fs.writeFile(lock, 'another instance');
      let ran = false;
      const section = new FileSystemTokenStore({ directory, app: 'app', masterKey: key }).exclusive('s', async () => {
        ran = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(ran).to.equal(false);
      await fs.rm(lock);
      await section;
      expect(ran).to.equal(true);
    });

    it('takes over, with a warning, a lock its holder left behind (older than the stale limit)', async () => {
      const logs = capturingLogger('warn');
      const store = new FileSystemTokenStore({
        directory,
        app: 'app',
        masterKey: randomBytes(32),
        logger: logs.logger,
      });
      const lock = await lockFileOf(store, 's');
      await fs.writeFile(lock, 'a crashed instance');
      const past = new Date(Date.now() - STALE_LOCK_MS - 1000);
      await fs.utimes(lock, past, past);
      expect(await store.exclusive('s', async () => 'ran')).to.equal('ran');
      expect(logs.raw()).to.contain('lock left by a vanished holder taken over');
      expect(logs.raw()).to.match(/"ageMs":1[6-9]\d{3}\b/); // how old it was: a crashed holder, not clocks that disagree
      expect((await fs.readdir(store.directory)).filter((f) => f.endsWith('.lock'))).to.deep.equal([]);
    });

    it('waiters that find a lock left behind at once take it over one at a time: sections never overlap', async () => {
      // Each waiter that saw the old lock stale must not remove the lock another waiter has just taken.
      const key = randomBytes(32);
      const handles = Array.from(
        { length: 4 },
        () => new FileSystemTokenStore({ directory, app: 'app', masterKey: key }),
      );
      const lock = await lockFileOf(handles[0]!, 's');
      let most = 0;
      for (let round = 0; round < 40; round++) {
        await fs.writeFile(lock, 'a crashed instance');
        const past = new Date(Date.now() - STALE_LOCK_MS - 1000);
        await fs.utimes(lock, past, past);
        let active = 0;
        await Promise.all(
          handles.map((handle) =>
            handle.exclusive('s', async () => {
              active++;
              most = Math.max(most, active);
              await delay(2);
              active--;
            }),
          ),
        );
      }
      expect(most).to.equal(1);
    });

    it('a takeover file left by a waiter that crashed while removing a lock is cleared once old; the lock is then taken over', async () => {
      const store = new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32) });
      const lock = await lockFileOf(store, 's');
      const takeover = `${lock}.takeover`;
      await fs.writeFile(lock, 'a crashed instance');
      await fs.writeFile(takeover, '');
      const past = new Date(Date.now() - STALE_LOCK_MS - 1000);
      await fs.utimes(lock, past, past);
      await fs.utimes(takeover, past, past);
      expect(await store.exclusive('s', async () => 'ran')).to.equal('ran');
      expect(
        (await fs.readdir(store.directory)).filter((f) => f.endsWith('.lock') || f.endsWith('.takeover')),
      ).to.deep.equal([]);
    });

    it('sweep removes old takeover files and keeps fresh ones (a lock being taken over)', async () => {
      const store = new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32) });
      const old = `${await lockFileOf(store, 'old')}.takeover`;
      const fresh = `${await lockFileOf(store, 'held')}.takeover`;
      await fs.writeFile(old, '');
      await fs.writeFile(fresh, '');
      const past = new Date(Date.now() - STALE_LOCK_MS - 1000);
      await fs.utimes(old, past, past);
      expect(await store.sweep()).to.equal(1);
      expect((await fs.readdir(store.directory)).filter((f) => f.endsWith('.takeover'))).to.deep.equal([
        path.basename(fresh),
      ]);
    });

    it('a lock left behind is not removed while a takeover file is fresh (another waiter is removing it)', async () => {
      const store = new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32) });
      const lock = await lockFileOf(store, 's');
      await fs.writeFile(lock, 'a crashed instance');
      const past = new Date(Date.now() - STALE_LOCK_MS - 1000);
      await fs.utimes(lock, past, past);
      await fs.writeFile(`${lock}.takeover`, '');
      expect(await store.sweep()).to.equal(0);
      expect(await fs.readFile(lock, 'utf8')).to.equal('a crashed instance');
      await fs.rm(`${lock}.takeover`);
      expect(await store.sweep()).to.equal(1);
    });

    it('a holder that overran its time does not remove the lock of the one that took over', async () => {
      const store = new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32) });
      const lock = await lockFileOf(store, 's');
      await store.exclusive('s', async () => {
        await fs.writeFile(lock, 'the instance that took over');
      });
      expect(await fs.readFile(lock, 'utf8')).to.equal('the instance that took over');
    });

    it('sweep removes stale lock files and keeps fresh ones', async () => {
      const store = new FileSystemTokenStore({ directory, app: 'app', masterKey: randomBytes(32) });
      const stale = await lockFileOf(store, 'old');
      const fresh = await lockFileOf(store, 'held');
      await fs.writeFile(stale, 'gone');
      await fs.writeFile(fresh, 'alive');
      const past = new Date(Date.now() - STALE_LOCK_MS - 1000);
      await fs.utimes(stale, past, past);
      expect(await store.sweep()).to.equal(1);
      expect((await fs.readdir(store.directory)).filter((f) => f.endsWith('.lock'))).to.deep.equal([
        path.basename(fresh),
      ]);
    });
  });
});
