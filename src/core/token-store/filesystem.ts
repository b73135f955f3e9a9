// The default token store: one encrypted file per session.
//
// - File names are an HMAC of the session id: the directory never reveals ids.
// - Contents are AES-256-GCM with the file name and expiry as associated
//   data, so a file copied over another session's, or an edited expiry, fails
//   to decrypt and counts as absent.
// - Keys are derived per app scope: one directory can serve several apps and
//   none can read another's records.
// - Writes are atomic: temp file, fsync, rename, then fsync of the directory.
// - Exclusive sections are lock files created with O_EXCL beside the record,
//   which every instance sharing the directory honours.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import type { Logger } from '../../logging.js';
import { deriveKey, EncryptionKeyError, parseEncryptionKey } from '../crypto/keys.js';
import { changesOf, type PublishingChannel } from './change-channel.js';
import { openRecord, parseSealedRecord, sealRecord } from './sealed-record.js';
import { checkedExpiry, type StoreChanges, type TokenStore } from './token-store.js';

const RECORD_SUFFIX = '.session';
const TEMP_SUFFIX = '.tmp';
/** Errors that say one record cannot be read, while the store itself can (see get). */
const UNREADABLE_RECORD = ['EISDIR', 'EACCES', 'EPERM', 'ELOOP'] as const;
const MAX_REPORTED_UNREADABLE = 1_000;
/** Temp files older than this are leftovers of a crashed write. */
const STALE_TEMP_MS = 60_000;
const LOCK_SUFFIX = '.lock';
/**
 * A lock file older than this belongs to a holder that vanished (a crashed
 * instance) and is taken over. Longer than a refresh can take: the provider
 * call's 10 s timeout plus the record's write.
 */
export const STALE_LOCK_MS = 15_000;
/**
 * Beside a lock, held while a lock left behind is removed: one remover at a time. One older than
 * STALE_LOCK_MS was left by a remover that crashed in the middle (a removal takes milliseconds).
 */
const TAKEOVER_SUFFIX = '.takeover';
/** How often a waiter looks again, at most (it starts at 5 ms and doubles). */
const LOCK_POLL_MAX_MS = 100;
export const KEY_FILE_NAME = '.gatehouse-encryption-key';

export interface FileSystemTokenStoreOptions {
  /** Base directory (tokenStore.fileSystem.directory). */
  readonly directory: string;
  /** App scope: records of one app are invisible to another. */
  readonly app: string;
  /** 32-byte master key; without it a key file (mode 0600) in `directory` is used or created. */
  readonly masterKey?: Buffer;
  /** `masterKey` is the key file's (loadOrCreateKeyFile): a store directory found missing gets it back. */
  readonly masterKeyFromKeyFile?: boolean;
  readonly logger?: Logger;
  readonly now?: () => number;
  /**
   * Where this store tells the other processes sharing the directory (the workers of one host) of
   * each write and removal, and hears of theirs (StoreChanges). Needs `masterKey`.
   */
  readonly channel?: { readonly via: PublishingChannel; readonly kind: string };
}

function isErrno(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code;
}

/** Creates `file` (never an existing one; mode 0600), writes and syncs it; on failure nothing is left behind. */
async function writeNewFile(file: string, contents: string): Promise<void> {
  const handle = await fs.open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    await handle.writeFile(contents, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close();
    await fs.rm(file, { force: true });
    throw error;
  }
  await handle.close();
}

/** Removes `file` if it was last written more than `limitMs` before `now`: its age then (ms), else undefined. */
async function removeIfOlder(file: string, now: number, limitMs: number): Promise<number | undefined> {
  const age = now - (await fs.stat(file)).mtimeMs;
  if (age <= limitMs) return undefined;
  await fs.rm(file, { force: true });
  return age;
}

/**
 * How long a start waits for a key file that is empty or incomplete: another instance sharing the
 * directory may have just created it (exclusively) and not yet written it.
 */
const KEY_FILE_WRITE_WAIT_MS = 2_000;

async function readKeyFile(file: string): Promise<Buffer> {
  const deadline = Date.now() + KEY_FILE_WRITE_WAIT_MS;
  for (let wait = 5; ; wait = Math.min(wait * 2, LOCK_POLL_MAX_MS)) {
    const text = await fs.readFile(file, 'utf8');
    try {
      return parseEncryptionKey(text, file);
    } catch (error) {
      if (Date.now() < deadline) {
        await delay(wait);
        continue;
      }
      // Never replaced by gatehouse: two instances replacing it at once could each keep a different key.
      if (text.trim() === '')
        throw new EncryptionKeyError(
          `${file} is empty (left by a start that stopped before writing it; nothing can have been encrypted with it): delete it and gatehouse makes a new one`,
        );
      throw error;
    }
  }
}

function keyFileContents(key: Buffer): string {
  return `${key.toString('hex')}\n`;
}

/**
 * Records sealed with a key file that is no longer there: the number of session records in the
 * store directory's app directories when its key file is missing (0 when it is there, or there
 * are none). A key file deleted alone means a new key, and every one of those records is lost.
 */
export async function recordsWithoutKeyFile(directory: string): Promise<number> {
  try {
    await fs.access(path.join(directory, KEY_FILE_NAME));
    return 0;
  } catch {
    // missing (or unreadable: loadOrCreateKeyFile says why)
  }
  let count = 0;
  let entries: string[];
  try {
    entries = await fs.readdir(directory);
  } catch {
    return 0;
  }
  for (const entry of entries.filter((name) => name.startsWith('app-'))) {
    try {
      count += (await fs.readdir(path.join(directory, entry))).filter((name) => name.endsWith(RECORD_SUFFIX)).length;
    } catch {
      // not a directory, or unreadable: nothing to count
    }
  }
  return count;
}

/** The key file's key, created when missing as a record is (exclusively, 0600, synced: never left empty by a failed write). */
export async function loadOrCreateKeyFile(directory: string): Promise<Buffer> {
  await fs.mkdir(directory, { recursive: true, mode: 0o700 });
  const file = path.join(directory, KEY_FILE_NAME);
  try {
    await writeNewFile(file, keyFileContents(randomBytes(32)));
  } catch (error) {
    if (!isErrno(error, 'EEXIST')) throw error; // another instance created it first: use theirs
  }
  const stat = await fs.stat(file);
  if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
    throw new EncryptionKeyError(`${file} is readable by group or others; chmod 600 it`);
  }
  return readKeyFile(file);
}

export class FileSystemTokenStore<T> implements TokenStore<T> {
  readonly #directory: string;
  readonly #logger: Logger | undefined;
  readonly #now: () => number;
  #keys: Promise<{ data: Buffer; names: Buffer }> | undefined;
  /** The key file's key, written back if the directory has to be recreated. */
  #keyFileKey: Buffer | undefined;
  #recreating: Promise<void> | undefined;
  readonly changes?: StoreChanges;

  constructor(private readonly options: FileSystemTokenStoreOptions) {
    // Scope by a digest of the app name: any app name makes a safe directory name.
    const scope = createHash('sha256').update(options.app).digest('hex').slice(0, 32);
    this.#directory = path.join(options.directory, `app-${scope}`);
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    const channel = options.channel;
    if (channel !== undefined) {
      if (options.masterKey === undefined)
        throw new TypeError('a token store that tells other processes of its changes needs its master key');
      const names = deriveKey(options.masterKey, 'token-store-names', options.app);
      this.changes = changesOf(channel.via, channel.kind, (id) => this.#fileName(names, id));
    }
  }

  /** Tells the other processes sharing the directory that the record changed (after the change took effect). */
  #tell(fileName: string): void {
    const channel = this.options.channel;
    channel?.via.publish({ kind: channel.kind, name: fileName });
  }

  /** Where this app's records are kept. */
  get directory(): string {
    return this.#directory;
  }

  #loadKeys(): Promise<{ data: Buffer; names: Buffer }> {
    this.#keys ??= (async () => {
      const master = this.options.masterKey ?? (await loadOrCreateKeyFile(this.options.directory));
      if (this.options.masterKey === undefined || this.options.masterKeyFromKeyFile) this.#keyFileKey = master;
      await fs.mkdir(this.#directory, { recursive: true, mode: 0o700 });
      return {
        data: deriveKey(master, 'token-store', this.options.app),
        names: deriveKey(master, 'token-store-names', this.options.app),
      };
    })();
    return this.#keys;
  }

  /**
   * Creates this app's directory and proves a record can be written there (a probe file,
   * written, synced and removed), so that a directory gatehouse cannot use stops it at startup
   * instead of failing every sign-in later.
   */
  async prepare(): Promise<void> {
    await this.#loadKeys();
    const probe = path.join(this.#directory, `.probe.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
    try {
      await writeNewFile(probe, 'probe');
    } finally {
      await fs.rm(probe, { force: true });
    }
  }

  #fileName(namesKey: Buffer, id: string): string {
    return `${createHmac('sha256', namesKey).update(id).digest('hex')}${RECORD_SUFFIX}`;
  }

  async get(id: string): Promise<T | undefined> {
    const keys = await this.#loadKeys();
    const fileName = this.#fileName(keys.names, id);
    let text: string;
    try {
      text = await fs.readFile(path.join(this.#directory, fileName), 'utf8');
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return undefined;
      // This one record cannot be read (a directory in its place, its mode changed): absent for
      // the caller, who signs in again (its cookie is cleared), rather than a 500 on every request
      // of the session for good. A fault of the store all the same: said loudly, once per record.
      if (UNREADABLE_RECORD.some((code) => isErrno(error, code))) {
        this.#reportUnreadable(fileName, error as NodeJS.ErrnoException);
        return undefined;
      }
      throw error;
    }
    const record = parseSealedRecord(text);
    if (record === undefined) {
      this.#logger?.warn({ file: fileName, reason: 'unparseable' }, 'token store record ignored');
      return undefined;
    }
    if (record.expiresAt <= this.#now()) return undefined;
    const opened = openRecord<T>(keys.data, fileName, record);
    if (opened === undefined)
      this.#logger?.warn({ file: fileName, reason: 'does not decrypt' }, 'token store record ignored');
    return opened;
  }

  async put(id: string, record: T, expiresAt: number): Promise<void> {
    checkedExpiry(expiresAt);
    const keys = await this.#loadKeys();
    const fileName = this.#fileName(keys.names, id);
    await this.#writeAtomically(fileName, JSON.stringify(sealRecord(keys.data, fileName, record, expiresAt)));
    this.#tell(fileName);
  }

  async #writeAtomically(fileName: string, contents: string): Promise<void> {
    const target = path.join(this.#directory, fileName);
    const temp = path.join(this.#directory, `.${fileName}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
    await this.#createInDirectory(temp, contents);
    await fs.rename(temp, target);
    await this.#syncDirectory();
  }

  /**
   * Creates a file in this app's directory (writeNewFile). If the directory has gone (deleted
   * while gatehouse ran: a cleanup of the working directory, a tmp cleaner), it is recreated and
   * the file created once more: otherwise every sign-in and refresh would fail until a restart.
   * A write that finds the directory back already (recreated for another write) only tries again.
   */
  async #createInDirectory(file: string, contents: string): Promise<void> {
    try {
      await writeNewFile(file, contents);
    } catch (error) {
      if (!isErrno(error, 'ENOENT')) throw error;
      if (!(await this.#directoryExists())) await this.#recreateDirectory();
      await writeNewFile(file, contents);
    }
  }

  async #directoryExists(): Promise<boolean> {
    try {
      await fs.stat(this.#directory);
      return true;
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return false;
      throw error;
    }
  }

  /**
   * Recreates this app's directory (0700), once for writes that found it gone together, and
   * the key file with the key in use when the key is the key file's: a restart then keeps the
   * sessions signed in since, and instances sharing the directory keep agreeing on the key.
   */
  #recreateDirectory(): Promise<void> {
    this.#recreating ??= (async () => {
      await fs.mkdir(this.#directory, { recursive: true, mode: 0o700 });
      this.#logger?.warn(
        { directory: this.#directory },
        'token store directory was missing (deleted while gatehouse ran?): recreated; sessions stored before must sign in again',
      );
      if (this.#keyFileKey !== undefined) await this.#restoreKeyFile(this.#keyFileKey);
    })().finally(() => {
      this.#recreating = undefined;
    });
    return this.#recreating;
  }

  async #restoreKeyFile(key: Buffer): Promise<void> {
    const file = path.join(this.options.directory, KEY_FILE_NAME);
    try {
      await writeNewFile(file, keyFileContents(key));
      this.#logger?.warn({ file }, 'token store key file was missing: written again with the key in use');
    } catch (error) {
      if (!isErrno(error, 'EEXIST')) throw error;
      // Another instance sharing the directory wrote it back first, or one that started meanwhile made a new key.
      const other = await fs
        .readFile(file, 'utf8')
        .then((text) => parseEncryptionKey(text, file))
        .catch(() => undefined);
      if (other === undefined || !other.equals(key)) {
        this.#logger?.error(
          { file },
          'token store key file now holds another key than this instance uses: sessions will not carry over between instances or restarts until every instance runs with the same key (set GATEHOUSE_ENCRYPTION_KEY)',
        );
      }
    }
  }

  /** Makes the rename durable. Not every platform can open a directory; there it is skipped. */
  async #syncDirectory(): Promise<void> {
    if (process.platform === 'win32') return;
    const dir = await fs.open(this.#directory, constants.O_RDONLY);
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  async delete(id: string): Promise<void> {
    const keys = await this.#loadKeys();
    const fileName = this.#fileName(keys.names, id);
    await fs.rm(path.join(this.#directory, fileName), { force: true });
    this.#tell(fileName);
  }

  async exclusive<R>(id: string, work: () => Promise<R>): Promise<R> {
    const keys = await this.#loadKeys();
    const lock = path.join(this.#directory, `${this.#fileName(keys.names, id)}${LOCK_SUFFIX}`);
    const holder = randomBytes(12).toString('hex');
    await this.#acquire(lock, holder);
    try {
      return await work();
    } finally {
      await this.#release(lock, holder);
    }
  }

  async #acquire(lock: string, holder: string): Promise<void> {
    for (let wait = 5; ; wait = Math.min(wait * 2, LOCK_POLL_MAX_MS)) {
      try {
        await this.#createInDirectory(lock, holder);
        return;
      } catch (error) {
        if (!isErrno(error, 'EEXIST')) throw error;
      }
      const stale = await this.#removeIfLeftBehind(lock);
      // The age tells a crashed holder from clocks that disagree (file times are the file server's).
      if (typeof stale === 'number')
        this.#logger?.warn(
          { file: path.basename(lock), ageMs: Math.round(stale) },
          'token store lock left by a vanished holder taken over',
        );
      if (stale !== 'kept') continue;
      await delay(wait);
    }
  }

  /**
   * Removes a lock whose holder vanished (older than STALE_LOCK_MS): its age (ms) when removed,
   * 'gone' when it was not there, or 'kept' (held, or another remover is at it). One remover at
   * a time, each looking at the lock's age again while it holds the takeover file: two waiters
   * that both found the lock stale must not have the second remove the lock the first has just taken.
   */
  async #removeIfLeftBehind(lock: string): Promise<number | 'gone' | 'kept'> {
    const takeover = `${lock}${TAKEOVER_SUFFIX}`;
    try {
      await writeNewFile(takeover, '');
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return 'gone'; // the directory went: the next create recreates it
      if (!isErrno(error, 'EEXIST')) throw error;
      await removeIfOlder(takeover, Date.now(), STALE_LOCK_MS).catch((failure: unknown) => {
        if (!isErrno(failure, 'ENOENT')) throw failure;
      });
      return 'kept';
    }
    try {
      // File times are wall-clock times, whatever clock this store was given.
      return (await removeIfOlder(lock, Date.now(), STALE_LOCK_MS)) ?? 'kept';
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return 'gone'; // released meanwhile
      throw error;
    } finally {
      await fs.rm(takeover, { force: true });
    }
  }

  /**
   * Removes the lock only if it is still this holder's (one that overran its time may have been
   * taken over). Never throws: the work's outcome stands, and a lock left behind goes stale.
   */
  async #release(lock: string, holder: string): Promise<void> {
    try {
      if ((await fs.readFile(lock, 'utf8')) === holder) await fs.rm(lock, { force: true });
    } catch (error) {
      if (!isErrno(error, 'ENOENT'))
        this.#logger?.warn(
          { file: path.basename(lock), reason: (error as Error).message },
          'token store lock not released',
        );
    }
  }

  /** Records found unreadable, each reported once (bounded: past the limit, the oldest is forgotten). */
  readonly #reported = new Set<string>();

  #reportUnreadable(fileName: string, error: NodeJS.ErrnoException): void {
    if (this.#reported.has(fileName)) return;
    this.#reported.add(fileName);
    if (this.#reported.size > MAX_REPORTED_UNREADABLE)
      this.#reported.delete(this.#reported.values().next().value as string);
    this.#logger?.error(
      { file: path.join(this.#directory, fileName), code: error.code, reason: error.message },
      'token store fault: a record cannot be read; its session is treated as signed out',
    );
  }

  async sweep(): Promise<number> {
    await this.#loadKeys();
    const now = this.#now();
    let removed = 0;
    let names: string[];
    try {
      names = await fs.readdir(this.#directory);
    } catch (error) {
      if (!isErrno(error, 'ENOENT')) throw error;
      await this.#recreateDirectory(); // nothing to sweep; the key file is back before a restart needs it
      return 0;
    }
    for (const name of names) {
      const file = path.join(this.#directory, name);
      try {
        if (name.endsWith(LOCK_SUFFIX)) {
          if (typeof (await this.#removeIfLeftBehind(file)) === 'number') removed++;
          continue;
        }
        if (name.endsWith(TAKEOVER_SUFFIX)) {
          if ((await removeIfOlder(file, Date.now(), STALE_LOCK_MS)) !== undefined) removed++;
          continue;
        }
        if (name.endsWith(TEMP_SUFFIX)) {
          if ((await removeIfOlder(file, now, STALE_TEMP_MS)) !== undefined) removed++;
          continue;
        }
        if (!name.endsWith(RECORD_SUFFIX)) continue;
        if (
          this.#expiredOrUnreadable(await fs.readFile(file, 'utf8'), now) &&
          (await this.#removeOutsideTurn(file, now))
        )
          removed++;
      } catch (error) {
        if (isErrno(error, 'ENOENT')) continue; // removed concurrently: fine
        // One entry the sweep cannot read or remove: said, and skipped; the rest is swept.
        this.#logger?.warn(
          { file: file, code: (error as NodeJS.ErrnoException).code, reason: (error as Error).message },
          'token store sweep skipped an entry it cannot read',
        );
      }
    }
    return removed;
  }

  #expiredOrUnreadable(text: string, now: number): boolean {
    const record = parseSealedRecord(text);
    return record === undefined || record.expiresAt <= now;
  }

  /**
   * Removes a record file the sweep found expired or unreadable, in its session's turn: unless a
   * section holds that turn (a refresh, in this instance or another, may be about to write the
   * record back renewed, and a removal after that write would end a session just renewed), and
   * only if it is still expired or unreadable when read again in the turn. A held turn leaves the
   * record to the next sweep; the sweep never waits.
   */
  async #removeOutsideTurn(file: string, now: number): Promise<boolean> {
    const lock = `${file}${LOCK_SUFFIX}`;
    const holder = randomBytes(12).toString('hex');
    try {
      await writeNewFile(lock, holder);
    } catch (error) {
      if (isErrno(error, 'EEXIST')) return false;
      throw error;
    }
    try {
      if (!this.#expiredOrUnreadable(await fs.readFile(file, 'utf8'), now)) return false;
      await fs.rm(file, { force: true });
      return true;
    } finally {
      await this.#release(lock, holder);
    }
  }
}
