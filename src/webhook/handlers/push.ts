import type { JsonObject } from '../payload.js';
import { repositoryName, stringAt } from './fields.js';

export interface PushSummary {
  event: 'push';
  repository: string;
  ref: string;
  commits: number;
  message: string;
}

export function handlePush(payload: JsonObject): PushSummary {
  const commits = Array.isArray(payload.commits) ? payload.commits.length : 0;
  return {
    event: 'push',
    repository: repositoryName(payload),
    ref: stringAt(payload, 'ref'),
    commits,
    message: `Processed push with ${commits} commit(s).`,
  };
}
