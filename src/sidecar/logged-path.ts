import type { IncomingMessage } from 'node:http';

/** The path a log line names: never the query, which may carry codes or tokens. */
export function loggedPath(req: IncomingMessage): string {
  return (req.url ?? '').split('?')[0]!;
}
