import type { JsonObject } from '../payload.js';
import { acknowledge } from './generic.js';
import { handleIssues } from './issues.js';
import { handlePullRequest } from './pull-request.js';
import { handlePush } from './push.js';

export type EventSummary = { readonly event: string; readonly message: string } & Record<string, unknown>;

const HANDLERS: ReadonlyMap<string, (payload: JsonObject) => EventSummary> = new Map<
  string,
  (payload: JsonObject) => EventSummary
>([
  ['push', (p) => ({ ...handlePush(p) })],
  ['pull_request', (p) => ({ ...handlePullRequest(p) })],
  ['issues', (p) => ({ ...handleIssues(p) })],
]);

/** The event's name if gatehouse has a handler of its own for it, else "other": a bounded label for metrics (the name is the sender's choice). */
export function knownEvent(event: string): string {
  return HANDLERS.has(event) || event === 'ping' ? event : 'other';
}

/** The 200 body for an event: its dedicated handler's summary, or a generic acknowledgement. */
export function dispatch(event: string, payload: JsonObject): EventSummary {
  const handler = HANDLERS.get(event);
  return handler === undefined ? { ...acknowledge(event) } : handler(payload);
}
