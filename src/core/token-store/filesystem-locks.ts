// The filesystem store's exclusive sections: a lock file created with O_EXCL beside the record,
// holding the holder's random id, which every instance sharing the directory honours. A lock
// left by a holder that vanished (a crashed instance) is taken over once it is old enough.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import type { Logger } from '../../logging.js';
import { isErrno, removeIfOlder, writeNewFile } from './filesystem-files.js';

/** A record's lock: the record's file name, then this. */
export const LOCK_SUFFIX = '.lock';
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
export const TAKEOVER_SUFFIX = '.takeover';
/** How often a waiter looks again, at most (it starts at 5 ms and doubles). */
const LOCK_POLL_MAX_MS = 100;

/** A new holder's id: what its lock file holds, so that it releases its own lock only. */
export function lockHolder(): string {
  return randomBytes(12).toString('hex');
}

/**
 * Takes `lock` for `holder`, waiting while another holds it. `create` makes the lock file as
 * writeNewFile does (the store's, which recreates its directory if it has gone).
 */
export async function acquireLock(
  lock: string,
  holder: string,
  create: (file: string, contents: string) => Promise<void>,
  logger: Logger | undefined,
): Promise<void> {
  for (let wait = 5; ; wait = Math.min(wait * 2, LOCK_POLL_MAX_MS)) {
    try {
      await create(lock, holder);
      return;
    } catch (error) {
      if (!isErrno(error, 'EEXIST')) throw error;
    }
    const stale = await removeIfLeftBehind(lock);
    // The age tells a crashed holder from clocks that disagree (file times are the file server's).
    if (typeof stale === 'number')
      logger?.warn(
        { file: path.basename(lock), ageMs: Math.round(stale) },
        'token store lock left by a vanished holder taken over',
      );
    if (stale !== 'kept') continue;
    await delay(wait);
  }
}

/**
 * Takes `lock` for `holder` if no one holds it, without waiting: whether it did. For work that
 * is better left to a later turn than waited for (the sweep).
 */
export async function tryLock(lock: string, holder: string): Promise<boolean> {
  try {
    await writeNewFile(lock, holder);
    return true;
  } catch (error) {
    if (isErrno(error, 'EEXIST')) return false;
    throw error;
  }
}

/**
 * Removes a lock whose holder vanished (older than STALE_LOCK_MS): its age (ms) when removed,
 * 'gone' when it was not there, or 'kept' (held, or another remover is at it). One remover at
 * a time, each looking at the lock's age again while it holds the takeover file: two waiters
 * that both found the lock stale must not have the second remove the lock the first has just taken.
 */
export async function removeIfLeftBehind(lock: string): Promise<number | 'gone' | 'kept'> {
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
    // File times are wall-clock times, whatever clock the store was given.
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
export async function releaseLock(lock: string, holder: string, logger: Logger | undefined): Promise<void> {
  try {
    if ((await fs.readFile(lock, 'utf8')) === holder) await fs.rm(lock, { force: true });
  } catch (error) {
    if (!isErrno(error, 'ENOENT'))
      logger?.warn({ file: path.basename(lock), reason: (error as Error).message }, 'token store lock not released');
  }
}
