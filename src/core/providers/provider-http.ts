// Calls to providers' HTTP endpoints (token, profile, e-mail): time-limited,
// size-limited, and every failure turned into unavailable or refused.
import { ProviderRefusedError, ProviderUnavailableError } from './errors.js';

export const PROVIDER_TIMEOUT_MS = 10_000;
/** Token and profile answers are small; anything bigger is not a real provider. */
const MAX_ANSWER_BYTES = 256 * 1024;

export interface ProviderAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
}

/** One request to a provider; network failures, timeouts and oversized answers are ProviderUnavailableError. */
export async function callProvider(url: string, init: { method?: string; headers?: Record<string, string>; body?: string }, during: string): Promise<ProviderAnswer> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS) });
  } catch {
    throw new ProviderUnavailableError(`${during}: provider unreachable`);
  }
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_ANSWER_BYTES) throw new ProviderUnavailableError(`${during}: answer too large`);
  let text: string;
  try {
    const body = Buffer.from(await response.arrayBuffer());
    if (body.length > MAX_ANSWER_BYTES) throw new Error('too large');
    text = body.toString('utf8');
  } catch {
    throw new ProviderUnavailableError(`${during}: answer unreadable or too large`);
  }
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
  const object = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  if (answer.status >= 200 && answer.status < 300) {
    if (object === undefined) throw new ProviderUnavailableError(`${during}: answer is not a JSON object`);
    return object;
  }
  if (answer.status >= 400 && answer.status < 500) {
    const code = typeof object?.error === 'string' ? object.error : typeof object?.error === 'object' ? 'provider_error' : undefined;
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

export function optionalString(object: Record<string, unknown>, name: string): string | undefined {
  const value = object[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `expires_in` seconds → ms since epoch, when the answer has one. */
export function expiresAt(object: Record<string, unknown>, now: number): number | undefined {
  const seconds = Number(object.expires_in);
  return Number.isFinite(seconds) && seconds > 0 ? now + seconds * 1000 : undefined;
}
