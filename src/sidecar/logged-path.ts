import type { IncomingMessage } from 'node:http';

/**
 * The path a log line names: never the query or a fragment, which may carry codes or tokens, and
 * of a target still in absolute form (one refused before it was rewritten) only its path: its
 * authority may hold credentials (`http://user:password@host/`).
 */
export function loggedPath(req: IncomingMessage): string {
  let target = req.url ?? '';
  if (target.charCodeAt(0) !== 0x2f /* '/' */) {
    const afterScheme = target.indexOf('//');
    const slash = afterScheme === -1 ? -1 : target.indexOf('/', afterScheme + 2);
    target = slash === -1 ? '' : target.slice(slash);
  }
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}
