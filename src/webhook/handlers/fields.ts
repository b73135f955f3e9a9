// Tolerant field readers: a payload missing a field a handler reads still
// gets a deterministic answer with a sensible default, never an exception.
import type { JsonObject } from '../payload.js';

export function objectAt(value: unknown, key: string): JsonObject | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const child = (value as JsonObject)[key];
  return typeof child === 'object' && child !== null && !Array.isArray(child) ? (child as JsonObject) : undefined;
}

export function stringAt(value: JsonObject | undefined, key: string, fallback = ''): string {
  const child = value?.[key];
  return typeof child === 'string' ? child : fallback;
}

export function integerAt(value: JsonObject | undefined, key: string): number | undefined {
  const child = value?.[key];
  return typeof child === 'number' && Number.isSafeInteger(child) ? child : undefined;
}

/** `<owner>/<repo>`: `full_name`, else built from owner login/name and name; '' when unknown. */
export function repositoryName(payload: JsonObject): string {
  const repository = objectAt(payload, 'repository');
  const fullName = stringAt(repository, 'full_name');
  if (fullName !== '') return fullName;
  const owner = objectAt(repository, 'owner');
  const ownerName = stringAt(owner, 'login') || stringAt(owner, 'name');
  const name = stringAt(repository, 'name');
  return ownerName !== '' && name !== '' ? `${ownerName}/${name}` : '';
}
