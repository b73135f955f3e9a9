// The files of the filesystem token store (filesystem.ts) and the two ways it makes and removes
// them: created exclusively and synced, so a failed write leaves nothing half-written behind; and
// removed only once old enough to be a leftover.
import { constants, promises as fs } from 'node:fs';

/** A session's record: the HMAC of its id, then this. */
export const RECORD_SUFFIX = '.session';
/** A file being written, renamed over its record once synced. */
export const TEMP_SUFFIX = '.tmp';

export function isErrno(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code;
}

/** Creates `file` (never an existing one; mode 0600), writes and syncs it; on failure nothing is left behind. */
export async function writeNewFile(file: string, contents: string): Promise<void> {
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
export async function removeIfOlder(file: string, now: number, limitMs: number): Promise<number | undefined> {
  const age = now - (await fs.stat(file)).mtimeMs;
  if (age <= limitMs) return undefined;
  await fs.rm(file, { force: true });
  return age;
}
