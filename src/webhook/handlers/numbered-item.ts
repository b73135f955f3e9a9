// pull_request and issues share one shape: an action on a numbered, titled item.
import type { JsonObject } from '../payload.js';
import { integerAt, objectAt, repositoryName, stringAt } from './fields.js';

export interface NumberedItemSummary {
  event: string;
  repository: string;
  action: string;
  number: number;
  title: string;
  message: string;
}

export function summarizeNumberedItem(
  event: string,
  itemKey: string,
  noun: string,
  payload: JsonObject,
): NumberedItemSummary {
  const item = objectAt(payload, itemKey);
  const number = integerAt(payload, 'number') ?? integerAt(item, 'number') ?? 0;
  const action = stringAt(payload, 'action');
  const repository = repositoryName(payload);
  const where = repository === '' ? '' : ` in ${repository}`;
  return {
    event,
    repository,
    action,
    number,
    title: stringAt(item, 'title'),
    message: `Processed ${noun} #${number}${where} (action: ${action === '' ? 'none' : action}).`,
  };
}
