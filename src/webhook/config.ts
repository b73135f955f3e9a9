import type { RedisLink } from '../core/token-store/redis-link.js';
import type { Logger } from '../logging.js';
import type { GatehouseCore } from '../native/types.js';
import type { WebhookApp } from './app-forwarder.js';
import { MAX_TIMER_MS } from '../timer-limit.js';
import { wholeNumber } from '../whole-number.js';

export const DEFAULT_WEBHOOK_PATH = '/api/forge/webhook';
export const DEFAULT_SECRET_VARIABLE = 'FORGE_WEBHOOK_SECRET';
export const DEFAULT_PREVIOUS_SECRETS_VARIABLE = 'FORGE_WEBHOOK_PREVIOUS_SECRETS';
/** The largest payload a forge sends. */
export const DEFAULT_BODY_LIMIT_BYTES = 25 * 1024 * 1024;
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;
/** Far longer than any forge waits for its answer (GitHub: 10 s), far shorter than a dripping client would like. */
export const DEFAULT_BODY_DEADLINE_MS = 60_000;
export const DEFAULT_DELIVERY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_MAX_DELIVERIES = 10_000;

export interface WebhookReceiverOptions {
  /** Signing secret. Default: the environment variable named by `secretVariable`. */
  secret?: string;
  /** Secrets still accepted during rotation. Default: FORGE_WEBHOOK_PREVIOUS_SECRETS. */
  previousSecrets?: readonly string[];
  /** Variable the secret is read from, and named in the 500 error. */
  secretVariable?: string;
  /** Path served by the adapters. */
  path?: string;
  /** Largest accepted body in bytes; larger deliveries get 413. */
  bodyLimitBytes?: number;
  /** A client that sends no body bytes for this long gets 408. */
  bodyTimeoutMs?: number;
  /** A body not received in full this long after the headers gets 408, however steadily it drips. */
  bodyDeadlineMs?: number;
  /** How long a delivery id is remembered for de-duplication. */
  deliveryWindowMs?: number;
  /** At most this many delivery ids are remembered (oldest forgotten first; in this process only). */
  maxDeliveries?: number;
  /** Delivery ids are remembered in Redis through this link, shared by every instance (GATEHOUSE_REDIS_URL). */
  redis?: RedisLink;
  /** Told of every delivery answered: the event (one with a handler of its own, "ping", else "other") and the status (metrics). */
  onDelivery?: (event: string, status: number) => void;
  /**
   * The app behind gatehouse (`serve --upstream`): verified deliveries are passed on to it and the
   * sender gets its answer, unless `forward` is false. Without it, the built-in summary answers.
   */
  app?: WebhookApp;
  /** Pass verified deliveries on to `app` (default GATEHOUSE_WEBHOOK_FORWARD, else on). */
  forward?: boolean;
  /** The path the app receives deliveries on (default GATEHOUSE_WEBHOOK_FORWARD_PATH, else `path`). */
  forwardPath?: string;
  /** Environment read for the defaults above (default process.env). */
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** Core implementation (default: the addon, else the fallback). */
  core?: GatehouseCore;
  /** Clock, for tests of the de-duplication window. */
  now?: () => number;
}

export interface WebhookConfig {
  readonly secrets: readonly string[];
  readonly secretVariable: string;
  readonly path: string;
  readonly bodyLimitBytes: number;
  readonly bodyTimeoutMs: number;
  readonly bodyDeadlineMs: number;
  readonly deliveryWindowMs: number;
  readonly maxDeliveries: number;
  /** Verified deliveries go on to the app, when there is one. */
  readonly forward: boolean;
  readonly forwardPath: string;
}

export class WebhookConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookConfigError';
  }
}

/**
 * FORGE_WEBHOOK_PREVIOUS_SECRETS: one secret, or several as a JSON array of
 * strings (a value starting with `[`). Empty means none.
 */
export function parsePreviousSecrets(raw: string | undefined, variable = DEFAULT_PREVIOUS_SECRETS_VARIABLE): string[] {
  if (raw === undefined || raw === '') return [];
  if (!raw.trimStart().startsWith('[')) return [raw];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new WebhookConfigError(`${variable} starts with "[" but is not a JSON array of strings`);
  }
  if (!Array.isArray(parsed) || !parsed.every((s) => typeof s === 'string')) {
    throw new WebhookConfigError(`${variable} must be a JSON array of strings`);
  }
  return parsed.filter((s) => s !== '');
}

function positiveInteger(
  value: number | string | undefined,
  name: string,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined || value === '') return fallback;
  const n = wholeNumber(value);
  if (!Number.isSafeInteger(n) || n <= 0 || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? '' : ` of at most ${max}`;
    throw new WebhookConfigError(`${name} must be a positive integer${range} (got ${JSON.stringify(value)})`);
  }
  return n;
}

function onOff(value: boolean | string | undefined, name: string, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (typeof value === 'boolean') return value;
  const lower = value.trim().toLowerCase();
  if (['on', 'true', '1', 'yes'].includes(lower)) return true;
  if (['off', 'false', '0', 'no'].includes(lower)) return false;
  throw new WebhookConfigError(`${name} must be on or off (got ${JSON.stringify(value)})`);
}

function absolutePath(value: string, what: string): string {
  if (!value.startsWith('/') || value.startsWith('//') || /[\u0000-\u0020\u007f?#\\]/.test(value)) {
    throw new WebhookConfigError(
      `${what} must be a path starting with "/", without query or spaces (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}

/** The app's path for deliveries: the receiver's own unless set. */
function forwardPathOf(value: string | undefined, receiverPath: string): string {
  return value === undefined || value === '' ? receiverPath : absolutePath(value, 'GATEHOUSE_WEBHOOK_FORWARD_PATH');
}

/** Options win over the environment; the environment wins over defaults. */
export function resolveWebhookConfig(options: WebhookReceiverOptions = {}): WebhookConfig {
  const env = options.env ?? process.env;
  const secretVariable = options.secretVariable ?? DEFAULT_SECRET_VARIABLE;
  const current = options.secret ?? env[secretVariable] ?? '';
  const previous = options.previousSecrets ?? parsePreviousSecrets(env[DEFAULT_PREVIOUS_SECRETS_VARIABLE]);
  const path = options.path ?? DEFAULT_WEBHOOK_PATH;
  if (!path.startsWith('/'))
    throw new WebhookConfigError(`webhook path must start with "/" (got ${JSON.stringify(path)})`);
  return {
    // Without the current secret the receiver is unconfigured (500), even if
    // previous secrets are set: rotation keeps old ones, it never replaces the new one.
    secrets: current === '' ? [] : [current, ...previous.filter((s) => s !== '')],
    secretVariable,
    path,
    bodyLimitBytes: positiveInteger(
      options.bodyLimitBytes ?? env.GATEHOUSE_WEBHOOK_BODY_LIMIT,
      'GATEHOUSE_WEBHOOK_BODY_LIMIT',
      DEFAULT_BODY_LIMIT_BYTES,
    ),
    // Timers: a longer value would fire after 1 ms (timer-limit.ts).
    bodyTimeoutMs: positiveInteger(
      options.bodyTimeoutMs ?? env.GATEHOUSE_WEBHOOK_BODY_TIMEOUT_MS,
      'GATEHOUSE_WEBHOOK_BODY_TIMEOUT_MS',
      DEFAULT_BODY_TIMEOUT_MS,
      MAX_TIMER_MS,
    ),
    bodyDeadlineMs: positiveInteger(
      options.bodyDeadlineMs ?? env.GATEHOUSE_WEBHOOK_BODY_DEADLINE_MS,
      'GATEHOUSE_WEBHOOK_BODY_DEADLINE_MS',
      DEFAULT_BODY_DEADLINE_MS,
      MAX_TIMER_MS,
    ),
    deliveryWindowMs: positiveInteger(
      options.deliveryWindowMs ?? env.GATEHOUSE_WEBHOOK_DELIVERY_WINDOW_MS,
      'GATEHOUSE_WEBHOOK_DELIVERY_WINDOW_MS',
      DEFAULT_DELIVERY_WINDOW_MS,
    ),
    maxDeliveries: positiveInteger(
      options.maxDeliveries ?? env.GATEHOUSE_WEBHOOK_MAX_DELIVERIES,
      'GATEHOUSE_WEBHOOK_MAX_DELIVERIES',
      DEFAULT_MAX_DELIVERIES,
    ),
    forward: onOff(options.forward ?? env.GATEHOUSE_WEBHOOK_FORWARD, 'GATEHOUSE_WEBHOOK_FORWARD', true),
    forwardPath: forwardPathOf(options.forwardPath ?? env.GATEHOUSE_WEBHOOK_FORWARD_PATH, path),
  };
}
