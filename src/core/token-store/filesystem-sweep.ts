// The filesystem store's sweep: what no one will read again goes. Expired or unreadable records
// (in their session's turn), locks and takeover files whose holder vanished, temp files left by a
// crashed write. Each entry on its own: one the sweep cannot read or remove is said and skipped.
import { promises as fs } from 'node:fs';
import path from 'node:path';

import type { Logger } from '../../logging.js';
import { isErrno, RECORD_SUFFIX, removeIfOlder, TEMP_SUFFIX } from './filesystem-files.js';
import {
  LOCK_SUFFIX,
  lockHolder,
  releaseLock,
  removeIfLeftBehind,
  STALE_LOCK_MS,
  TAKEOVER_SUFFIX,
  tryLock,
} from './filesystem-locks.js';
import { parseSealedRecord } from './sealed-record.js';

/** Temp files older than this are leftovers of a crashed write. */
const STALE_TEMP_MS = 60_000;

/** Sweeps the entries `names` of `directory` at time `now` (the store's clock): how many it removed. */
export async function sweepEntries(
  directory: string,
  names: readonly string[],
  now: number,
  logger: Logger | undefined,
): Promise<number> {
  let removed = 0;
  for (const name of names) {
    const file = path.join(directory, name);
    try {
      if (name.endsWith(LOCK_SUFFIX)) {
        if (typeof (await removeIfLeftBehind(file)) === 'number') removed++;
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
      if (expiredOrUnreadable(await fs.readFile(file, 'utf8'), now) && (await removeOutsideTurn(file, now, logger)))
        removed++;
    } catch (error) {
      if (isErrno(error, 'ENOENT')) continue; // removed concurrently: fine
      logger?.warn(
        { file: file, code: (error as NodeJS.ErrnoException).code, reason: (error as Error).message },
        'token store sweep skipped an entry it cannot read',
      );
    }
  }
  return removed;
}

function expiredOrUnreadable(text: string, now: number): boolean {
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
async function removeOutsideTurn(file: string, now: number, logger: Logger | undefined): Promise<boolean> {
  const lock = `${file}${LOCK_SUFFIX}`;
  const holder = lockHolder();
  if (!(await tryLock(lock, holder))) return false;
  try {
    if (!expiredOrUnreadable(await fs.readFile(file, 'utf8'), now)) return false;
    await fs.rm(file, { force: true });
    return true;
  } finally {
    await releaseLock(lock, holder, logger);
  }
}
