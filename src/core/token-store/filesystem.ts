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
//   which every instance sharing the directory honours (filesystem-locks.ts).
// - Without GATEHOUSE_ENCRYPTION_KEY, the master key is a key file in the
//   directory (filesystem-key-file.ts); expired records and leftovers go at each
//   sweep (filesystem-sweep.ts).
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';

import type { Logger } from '../../logging.js';
import { deriveKey } from '../crypto/keys.js';
import { changesOf, type PublishingChannel } from './change-channel.js';
import { isErrno, RECORD_SUFFIX, TEMP_SUFFIX, writeNewFile } from './filesystem-files.js';
import { loadOrCreateKeyFile, restoreKeyFile } from './filesystem-key-file.js';
import { acquireLock, LOCK_SUFFIX, lockHolder, releaseLock } from './filesystem-locks.js';
import { sweepEntries } from './filesystem-sweep.js';
import { openRecord, parseSealedRecord, sealRecord } from './sealed-record.js';
import { checkedExpiry, type StoreChanges, type TokenStore } from './token-store.js';

/** Errors that say one record cannot be read, while the store itself can (see get). */
const UNREADABLE_RECORD = ['EISDIR', 'EACCES', 'EPERM', 'ELOOP'] as const;
const MAX_REPORTED_UNREADABLE = 1_000;

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
      if (this.#keyFileKey !== undefined) await restoreKeyFile(this.options.directory, this.#keyFileKey, this.#logger);
    })().finally(() => {
      this.#recreating = undefined;
    });
    return this.#recreating;
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
    const holder = lockHolder();
    await acquireLock(lock, holder, (file, contents) => this.#createInDirectory(file, contents), this.#logger);
    try {
      return await work();
    } finally {
      await releaseLock(lock, holder, this.#logger);
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
    let names: string[];
    try {
      names = await fs.readdir(this.#directory);
    } catch (error) {
      if (!isErrno(error, 'ENOENT')) throw error;
      await this.#recreateDirectory(); // nothing to sweep; the key file is back before a restart needs it
      return 0;
    }
    return sweepEntries(this.#directory, names, now, this.#logger);
  }
}
