/** Whether a parsed JSON value is an object (not null, not an array): a document or one of its blocks. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
