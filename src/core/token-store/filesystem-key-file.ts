// The filesystem store's key file: the master key kept beside the records when no
// GATEHOUSE_ENCRYPTION_KEY is given. Created once, exclusively, by whichever instance sharing the
// directory starts first, and never replaced by gatehouse: two instances replacing it at once
// could each keep a different key.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import type { Logger } from '../../logging.js';
import { EncryptionKeyError, parseEncryptionKey } from '../crypto/keys.js';
import { isErrno, RECORD_SUFFIX, writeNewFile } from './filesystem-files.js';

export const KEY_FILE_NAME = '.gatehouse-encryption-key';

/**
 * How long a start waits for a key file that is empty or incomplete: another instance sharing the
 * directory may have just created it (exclusively) and not yet written it.
 */
const KEY_FILE_WRITE_WAIT_MS = 2_000;
/** How often that start looks again, at most (it starts at 5 ms and doubles). */
const KEY_FILE_POLL_MAX_MS = 100;

async function readKeyFile(file: string): Promise<Buffer> {
  const deadline = Date.now() + KEY_FILE_WRITE_WAIT_MS;
  for (let wait = 5; ; wait = Math.min(wait * 2, KEY_FILE_POLL_MAX_MS)) {
    const text = await fs.readFile(file, 'utf8');
    try {
      return parseEncryptionKey(text, file);
    } catch (error) {
      if (Date.now() < deadline) {
        await delay(wait);
        continue;
      }
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

/**
 * Writes the key file in `directory` back with the key in use, when it went missing while
 * gatehouse ran: a restart then keeps the sessions signed in since, and instances sharing the
 * directory keep agreeing on the key. A key file found there already is left as it is.
 */
export async function restoreKeyFile(directory: string, key: Buffer, logger: Logger | undefined): Promise<void> {
  const file = path.join(directory, KEY_FILE_NAME);
  try {
    await writeNewFile(file, keyFileContents(key));
    logger?.warn({ file }, 'token store key file was missing: written again with the key in use');
  } catch (error) {
    if (!isErrno(error, 'EEXIST')) throw error;
    // Another instance sharing the directory wrote it back first, or one that started meanwhile made a new key.
    const other = await fs
      .readFile(file, 'utf8')
      .then((text) => parseEncryptionKey(text, file))
      .catch(() => undefined);
    if (other === undefined || !other.equals(key)) {
      logger?.error(
        { file },
        'token store key file now holds another key than this instance uses: sessions will not carry over between instances or restarts until every instance runs with the same key (set GATEHOUSE_ENCRYPTION_KEY)',
      );
    }
  }
}
