/** A parsed delivery: a JSON object, never an array or a scalar. */
export type JsonObject = { readonly [key: string]: unknown };

export class PayloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PayloadError';
  }
}

const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';
// fatal: invalid UTF-8 is an error, not silently replaced. ignoreBOM false: a leading BOM is dropped.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function mediaType(contentType: string | undefined): string {
  if (contentType === undefined || contentType === 'application/json') return contentType ?? '';
  return contentType.split(';', 1)[0]!.trim().toLowerCase();
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

function parseObject(text: string, what: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // The parser's message quotes the body; the sender knows its body, the logs must not.
    throw new PayloadError(`${what} is not valid JSON.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new PayloadError(`${what} must be a JSON object, got ${describe(value)}.`);
  }
  return value as JsonObject;
}

/**
 * Decodes an already verified body. JSON deliveries are the body itself;
 * form deliveries (`payload=<json>`) carry the JSON in the `payload` field.
 */
export function decodePayload(body: Buffer, contentType: string | undefined): JsonObject {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new PayloadError('Request body is not valid UTF-8.');
  }
  if (mediaType(contentType) !== FORM_MEDIA_TYPE) return parseObject(text, 'Request body');

  const payloads = new URLSearchParams(text).getAll('payload');
  if (payloads.length === 0)
    throw new PayloadError(
      'Form-encoded delivery has no "payload" field (sending JSON? use Content-Type: application/json).',
    );
  if (payloads.length > 1) throw new PayloadError('Form-encoded delivery has more than one "payload" field.');
  return parseObject(payloads[0]!, 'The "payload" field');
}
