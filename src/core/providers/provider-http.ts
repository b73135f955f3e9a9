// Calls to providers' HTTP endpoints (token, profile, e-mail): time-limited,
// size-limited, and every failure turned into unavailable or refused.
import { ProviderRefusedError, ProviderUnavailableError } from './errors.js';
import { loggableErrorCode } from './oauth-error-code.js';

export const PROVIDER_TIMEOUT_MS = 10_000;
/** Token, profile, key and discovery answers are small; anything bigger is not a real provider. */
export const MAX_ANSWER_BYTES = 256 * 1024;

export interface ProviderAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
}

/**
 * An answer's body, read no further than MAX_ANSWER_BYTES: a larger declared length is refused
 * before a byte is read, and a longer stream is cancelled as soon as it crosses the limit, so a
 * provider (or whatever answers in its place) cannot fill gatehouse's memory for the length of
 * the timeout. ProviderUnavailableError when too large or unreadable.
 */
export async function readAnswerBody(response: Response, during: string): Promise<Buffer> {
  if (Number(response.headers.get('content-length') ?? '0') > MAX_ANSWER_BYTES) {
    await response.body?.cancel().catch(() => undefined);
    throw new ProviderUnavailableError(`${during}: answer too large`);
  }
  if (response.body === null) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let step: Awaited<ReturnType<typeof reader.read>>;
    try {
      step = await reader.read();
    } catch {
      throw new ProviderUnavailableError(`${during}: answer unreadable`);
    }
    if (step.done) return Buffer.concat(chunks, size);
    size += step.value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new ProviderUnavailableError(`${during}: answer too large`);
    }
    chunks.push(step.value);
  }
}

/** Statuses whose Response may not have a body (the Fetch standard's null body statuses). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * fetch for openid-client (its customFetch): the answer's body is read here, within
 * MAX_ANSWER_BYTES, before openid-client parses it.
 */
export async function boundedFetch(url: string, init: RequestInit): Promise<Response> {
  const response = await fetch(url, init);
  const body = await readAnswerBody(response, 'provider answer');
  return new Response(NULL_BODY_STATUSES.has(response.status) ? null : body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** One request to a provider; network failures, timeouts and oversized answers are ProviderUnavailableError. */
export async function callProvider(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string },
  during: string,
): Promise<ProviderAnswer> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS) });
  } catch {
    throw new ProviderUnavailableError(`${during}: provider unreachable`);
  }
  const text = (await readAnswerBody(response, during)).toString('utf8');
  return { status: response.status, contentType: (response.headers.get('content-type') ?? '').toLowerCase(), text };
}

/**
 * The JSON object of a provider answer. 2xx with a JSON object: the object.
 * 4xx with an OAuth error: refused. Anything else (5xx, HTML, not an object): unavailable.
 */
export function jsonAnswer(answer: ProviderAnswer, during: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.text);
  } catch {
    parsed = undefined;
  }
  const object =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  if (answer.status >= 200 && answer.status < 300) {
    if (object === undefined) throw new ProviderUnavailableError(`${during}: answer is not a JSON object`);
    return object;
  }
  if (answer.status >= 400 && answer.status < 500) {
    // Facebook's errors are objects; any code is bounded before it reaches a log line.
    const code = object?.error === undefined ? undefined : loggableErrorCode(object.error);
    throw new ProviderRefusedError(`${during}: provider answered ${answer.status}${code ? ` ${code}` : ''}`, code);
  }
  throw new ProviderUnavailableError(`${during}: provider answered ${answer.status}`);
}

/** A required string (or number, as text) field of a provider answer. */
export function stringField(object: Record<string, unknown>, name: string, during: string): string {
  const value = object[name];
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new ProviderUnavailableError(`${during}: answer has no ${name}`);
}

/**
 * A user id that providers write as a decimal number (Facebook's `id`, Twitter's `id_str`): a string
 * of digits, or a positive whole number a double holds exactly. Anything else is not the provider's
 * answer, and must not become a -ID (an app keys its users on it).
 */
export function decimalIdField(object: Record<string, unknown>, name: string, during: string): string {
  const value = object[name];
  if (typeof value === 'string' && /^[1-9][0-9]{0,39}$/.test(value)) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return String(value);
  throw new ProviderUnavailableError(`${during}: answer has no numeric ${name}`);
}

export function optionalString(object: Record<string, unknown>, name: string): string | undefined {
  const value = object[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * A display value (a profile's name, its email): a string with something in it besides white space.
 * A name of blanks names nobody: the user's name then falls back to the next value (email, id), as
 * an empty one does; a header would carry it as nothing at all.
 */
export function optionalText(object: Record<string, unknown>, name: string): string | undefined {
  const value = optionalString(object, name);
  return value !== undefined && value.trim() !== '' ? value : undefined;
}

/**
 * The longest an access token is taken to last. A provider that says longer (`expires_in: 1e308`) is
 * read as meaning "a long time": the expiry must stay a date (headers and /.auth/me write it as one).
 */
const LONGEST_TOKEN_LIFETIME_SECONDS = 10 * 365 * 24 * 3600;

/** An absolute expiry (seconds since the epoch, as Facebook's `expires_at`) → ms, at most as far on as the longest lifetime. */
export function expiryAt(epochSeconds: number, now: number): number {
  return Math.min(epochSeconds * 1000, now + LONGEST_TOKEN_LIFETIME_SECONDS * 1000);
}

/** An `expires_in` (seconds) → ms since epoch; undefined when it is not a positive number. */
export function expiryAfter(expiresIn: unknown, now: number): number | undefined {
  const seconds = typeof expiresIn === 'string' && expiresIn.trim() !== '' ? Number(expiresIn) : expiresIn;
  if (typeof seconds !== 'number' || !(seconds > 0)) return undefined;
  return now + Math.min(seconds, LONGEST_TOKEN_LIFETIME_SECONDS) * 1000;
}
