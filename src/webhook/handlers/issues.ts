import type { JsonObject } from '../payload.js';
import { summarizeNumberedItem, type NumberedItemSummary } from './numbered-item.js';

export function handleIssues(payload: JsonObject): NumberedItemSummary {
  return summarizeNumberedItem('issues', 'issue', 'issue', payload);
}
