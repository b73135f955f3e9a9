import type { JsonObject } from '../payload.js';
import { summarizeNumberedItem, type NumberedItemSummary } from './numbered-item.js';

export function handlePullRequest(payload: JsonObject): NumberedItemSummary {
  return summarizeNumberedItem('pull_request', 'pull_request', 'pull request', payload);
}
