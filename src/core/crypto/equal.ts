import { createHash, timingSafeEqual } from 'node:crypto';

/** Whether two strings are equal, in time that depends on neither (lengths included: both are hashed first). */
export function constantTimeEqual(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}
