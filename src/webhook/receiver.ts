import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { performance } from 'node:perf_hooks';

import { createLogger, type Logger } from '../logging.js';
import { defaultCore } from '../native/index.js';
import type { SignatureVerifier } from '../native/types.js';
import { BodyReadError, readRawBody } from './body.js';
import { resolveWebhookConfig, type WebhookConfig, type WebhookReceiverOptions } from './config.js';
import { StoreUnavailableError } from '../core/token-store/token-store.js';
import { DeliveryLog, MAX_DELIVERY_ID_LENGTH, type DeliveryRegistry } from './deliveries.js';
import { describeError } from './errors.js';
import { dispatch, knownEvent, type EventSummary } from './handlers/index.js';
import { SharedDeliveryLog } from './shared-deliveries.js';
import { decodePayload, PayloadError, type JsonObject } from './payload.js';
import { errorResponse, jsonResponse, type WebhookResponse } from './response.js';
import { Subscribers, type Subscriber, type SubscriptionName } from './subscribers.js';

/** What an adapter knows about one request. */
export interface WebhookRequest {
  readonly method: string;
  /** Lower-case names, as node:http gives them. */
  readonly headers: IncomingHttpHeaders;
  readonly body: Readable;
}

export const MESSAGES = {
  invalidSignature: 'Invalid or missing webhook signature.',
  methodNotAllowed: 'Method not allowed; webhook deliveries use POST.',
  tooLarge: (limit: number) => `Request body exceeds the limit of ${limit} bytes.`,
  timeout: 'Request body was not received in time.',
  badLength: 'Request body length does not match Content-Length.',
  conflict: 'This X-Forge-Delivery id was already used for a different payload.',
  internal: 'Internal error while processing the delivery.',
  storeUnavailable: 'Deliveries cannot be checked for duplicates right now; please deliver again shortly.',
  notConfigured: (variable: string) => `Server is not configured with ${variable}.`,
} as const;

// The header's shape, checked before any body byte is read so unsigned junk
// costs nothing. The signature itself is checked by the core after reading.
const SIGNATURE_SHAPE = /^sha256=[0-9a-f]{64}$/;
const LOGGED_HEADER_LENGTH = 128;

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Delivery ids and event names are caller-supplied: bound what reaches the logs. */
function forLog(value: string): string {
  return value.length > LOGGED_HEADER_LENGTH ? `${value.slice(0, LOGGED_HEADER_LENGTH)}…` : value;
}

/**
 * The signed-webhook receiver (SPEC §4.2). Order, each step stops on
 * failure: secret configured (500) → signature over the raw bytes (401) →
 * JSON object (400) → dispatch on X-Forge-Event (200).
 */
export class WebhookReceiver {
  readonly config: WebhookConfig;
  readonly logger: Logger;
  readonly #verifier: SignatureVerifier;
  readonly #deliveries: DeliveryRegistry<EventSummary>;
  readonly #subscribers: Subscribers;
  readonly #onDelivery: ((event: string, status: number) => void) | undefined;

  constructor(options: WebhookReceiverOptions = {}) {
    this.#onDelivery = options.onDelivery;
    this.config = resolveWebhookConfig(options);
    this.logger = options.logger ?? createLogger();
    const core = options.core ?? defaultCore().core;
    this.#verifier = core.createVerifier(this.config.secrets);
    this.#deliveries = options.redis !== undefined ? new SharedDeliveryLog(options.redis, this.config.deliveryWindowMs) : new DeliveryLog(this.config.deliveryWindowMs, this.config.maxDeliveries, options.now);
    this.#subscribers = new Subscribers(this.logger);
  }

  /**
   * Runs `subscriber` after the response for each delivery of `event` ('*'
   * for all). Redeliveries of a remembered id do not run it again. Returns
   * a function that unsubscribes.
   */
  on(event: SubscriptionName, subscriber: Subscriber): () => void {
    return this.#subscribers.add(event, subscriber);
  }

  /** Answers one request. Never rejects: an unexpected failure is logged and answered 500. */
  async handle(request: WebhookRequest): Promise<WebhookResponse> {
    try {
      return await this.#handle(request);
    } catch (error) {
      this.logger.error({ err: describeError(error) }, 'webhook receiver failed');
      return errorResponse(500, MESSAGES.internal);
    }
  }

  async #handle(request: WebhookRequest): Promise<WebhookResponse> {
    const started = performance.now();
    const deliveryId = header(request.headers, 'x-forge-delivery') ?? '';
    const event = header(request.headers, 'x-forge-event') ?? '';
    const finish = (response: WebhookResponse, reason?: string, extra: Record<string, unknown> = {}): WebhookResponse => {
      const fields = {
        deliveryId: forLog(deliveryId),
        event: forLog(event),
        status: response.status,
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
        ...(reason ? { reason } : {}),
        ...extra,
      };
      this.#onDelivery?.(knownEvent(event), response.status);
      if (response.status >= 500) this.logger.error(fields, 'webhook delivery failed');
      else if (response.status >= 400) this.logger.warn(fields, 'webhook delivery rejected');
      else this.logger.info(fields, 'webhook delivery processed');
      return response;
    };

    if (request.method !== 'POST') {
      return finish(errorResponse(405, MESSAGES.methodNotAllowed, { headers: { Allow: 'POST' } }), 'method');
    }
    if (this.config.secrets.length === 0) {
      return finish(errorResponse(500, MESSAGES.notConfigured(this.config.secretVariable)), 'no secret configured');
    }
    const signature = header(request.headers, 'x-forge-signature-256');
    if (signature === undefined || !SIGNATURE_SHAPE.test(signature)) {
      return finish(errorResponse(401, MESSAGES.invalidSignature), signature === undefined ? 'signature missing' : 'signature malformed');
    }

    let body: Buffer;
    try {
      body = await readRawBody(request.body, {
        limitBytes: this.config.bodyLimitBytes,
        timeoutMs: this.config.bodyTimeoutMs,
        deadlineMs: this.config.bodyDeadlineMs,
        declaredLength: header(request.headers, 'content-length'),
      });
    } catch (error) {
      if (!(error instanceof BodyReadError)) throw error;
      const close = { closeConnection: true };
      switch (error.failure) {
        case 'too-large':
          return finish(errorResponse(413, MESSAGES.tooLarge(this.config.bodyLimitBytes), close), 'body too large');
        case 'timeout':
          return finish(errorResponse(408, MESSAGES.timeout, close), 'body timeout');
        case 'bad-length':
          return finish(errorResponse(400, MESSAGES.badLength, close), 'body length mismatch');
        case 'aborted':
          return finish(errorResponse(400, 'Request body was aborted by the client.', close), 'client aborted');
      }
    }

    if (!this.#verifier.verify(body, signature)) {
      return finish(errorResponse(401, MESSAGES.invalidSignature), 'signature mismatch');
    }

    let payload: JsonObject;
    try {
      payload = decodePayload(body, header(request.headers, 'content-type'));
    } catch (error) {
      if (!(error instanceof PayloadError)) throw error;
      return finish(errorResponse(400, error.message), 'payload');
    }

    return finish(...(await this.#dispatch(deliveryId, event, body, payload)));
  }

  async #dispatch(deliveryId: string, event: string, body: Buffer, payload: JsonObject): Promise<[WebhookResponse, string?, Record<string, unknown>?]> {
    // No listener at all when nobody subscribed: nothing to run after the response.
    const notify = this.#subscribers.has(event) ? () => this.#subscribers.notify({ id: deliveryId, event, payload }) : undefined;
    try {
      if (deliveryId === '' || deliveryId.length > MAX_DELIVERY_ID_LENGTH) {
        return [jsonResponse(200, dispatch(event, payload), notify ? { afterResponse: notify } : {})];
      }
      // The event is part of what "the same delivery" means, with the exact bytes.
      const digest = `${event}\n${createHash('sha256').update(body).digest('base64')}`;
      const outcome = await this.#deliveries.run(deliveryId, digest, () => dispatch(event, payload));
      switch (outcome.kind) {
        case 'first':
          return [jsonResponse(200, outcome.value, notify ? { afterResponse: notify } : {})];
        case 'duplicate':
          return [jsonResponse(200, outcome.value), undefined, { duplicate: true }];
        case 'conflict':
          return [errorResponse(409, MESSAGES.conflict), 'delivery id reused'];
      }
    } catch (error) {
      if (error instanceof StoreUnavailableError) {
        // Whether it ran before cannot be told: not run, and the sender is asked to deliver it again.
        this.logger.warn({ reason: error.message }, 'webhook delivery turned away: the delivery store is unavailable');
        return [errorResponse(503, MESSAGES.storeUnavailable, { headers: { 'Retry-After': '5' } }), 'delivery store unavailable'];
      }
      this.logger.error({ err: describeError(error) }, 'webhook handler threw');
      return [errorResponse(500, MESSAGES.internal), 'handler error'];
    }
  }
}
