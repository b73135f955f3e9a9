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
import { AppUnavailableError, type AppAnswer, type WebhookApp } from './app-forwarder.js';
import { readDeliveryHeaders } from './delivery-headers.js';
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
  /** The request target as sent (its query goes on to the app with a forwarded delivery). */
  readonly url?: string;
  /** node's rawHeaders (names as sent, in order), for the header policy of a forwarded delivery. */
  readonly rawHeaders?: readonly string[];
  readonly remoteAddress?: string;
}

export const MESSAGES = {
  invalidSignature: 'Invalid or missing webhook signature.',
  methodNotAllowed: 'Method not allowed; webhook deliveries use POST.',
  tooLarge: (limit: number) => `Request body exceeds the limit of ${limit} bytes.`,
  timeout: 'Request body was not received in time.',
  badLength: 'Request body length does not match Content-Length.',
  conflict: (header: string) => `This ${header} id was already used for a different payload.`,
  internal: 'Internal error while processing the delivery.',
  storeUnavailable: 'Deliveries cannot be checked for duplicates right now; please deliver again shortly.',
  notConfigured: (variable: string) => `Server is not configured with ${variable}.`,
  appUnreachable: 'The app could not be reached; the delivery was not passed on.',
  appTimeout: 'The app did not answer the delivery in time.',
  appBusy: 'The app has too many requests in flight; please deliver again shortly.',
} as const;

/** What a delivery id remembers: the built-in summary, or the app's answer when deliveries are forwarded. JSON either way. */
type Remembered = EventSummary | { readonly appAnswer: AppAnswer };

/**
 * Which answers of the app are remembered for the delivery id (a redelivery gets them again and
 * does not reach the app): every one but a failure the sender may well want to retry: 5xx, 408, 429.
 */
export function remembersAppAnswer(status: number): boolean {
  return status < 500 && status !== 408 && status !== 429;
}

/** The app answered, but not for keeps: not remembered, the sender's retry goes to the app again. */
class AnswerNotRemembered extends Error {
  constructor(readonly answer: AppAnswer) {
    super(`the app answered ${answer.status}`);
  }
}

/** The sender's answer from the app's: its status, Content-Type, Retry-After and (bounded) body. */
function appResponse(answer: AppAnswer, extra: { afterResponse?: () => void } = {}): WebhookResponse {
  const body = Buffer.from(answer.body, 'base64');
  return {
    status: answer.status,
    headers: {
      ...(answer.contentType !== undefined ? { 'Content-Type': answer.contentType } : {}),
      ...(answer.retryAfter !== undefined ? { 'Retry-After': answer.retryAfter } : {}),
      'Content-Length': String(body.length),
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
    },
    body,
    closeConnection: false,
    ...(extra.afterResponse ? { afterResponse: extra.afterResponse } : {}),
  };
}

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
 * The signed-webhook receiver (docs/webhooks.md). Order, each step stops on
 * failure: secret configured (500) → signature over the raw bytes (401) →
 * header families agree (400) → JSON object (400) → dispatch on the event
 * (200), or, in front of an app, the delivery passed on to it and its answer.
 */
export class WebhookReceiver {
  readonly config: WebhookConfig;
  readonly logger: Logger;
  readonly #verifier: SignatureVerifier;
  readonly #deliveries: DeliveryRegistry<Remembered>;
  readonly #app: WebhookApp | undefined;
  readonly #subscribers: Subscribers;
  readonly #onDelivery: ((event: string, status: number) => void) | undefined;

  constructor(options: WebhookReceiverOptions = {}) {
    this.#onDelivery = options.onDelivery;
    this.config = resolveWebhookConfig(options);
    this.logger = options.logger ?? createLogger();
    const core = options.core ?? defaultCore().core;
    this.#verifier = core.createVerifier(this.config.secrets);
    this.#deliveries =
      options.redis !== undefined
        ? new SharedDeliveryLog(options.redis, this.config.deliveryWindowMs)
        : new DeliveryLog(this.config.deliveryWindowMs, this.config.maxDeliveries, options.now);
    this.#subscribers = new Subscribers(this.logger);
    this.#app = this.config.forward ? options.app : undefined;
  }

  /** Verified deliveries are passed on to the app (and the sender gets its answer). */
  get forwarding(): boolean {
    return this.#app !== undefined;
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
    const delivery = readDeliveryHeaders(request.headers);
    const { deliveryId, event } = delivery;
    const finish = (
      response: WebhookResponse,
      reason?: string,
      extra: Record<string, unknown> = {},
    ): WebhookResponse => {
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
    // Either family's signature, or both: then both must verify (delivery-headers.ts).
    const { signatures } = delivery;
    if (signatures.length === 0 || !signatures.every((s) => SIGNATURE_SHAPE.test(s))) {
      return finish(
        errorResponse(401, MESSAGES.invalidSignature),
        signatures.length === 0 ? 'signature missing' : 'signature malformed',
      );
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

    if (!signatures.every((signature) => this.#verifier.verify(body, signature))) {
      return finish(errorResponse(401, MESSAGES.invalidSignature), 'signature mismatch');
    }
    if (delivery.disagreement !== undefined) {
      return finish(errorResponse(400, delivery.disagreement), 'header families disagree');
    }

    let payload: JsonObject;
    try {
      payload = decodePayload(body, header(request.headers, 'content-type'));
    } catch (error) {
      if (!(error instanceof PayloadError)) throw error;
      return finish(errorResponse(400, error.message), 'payload');
    }

    return finish(...(await this.#dispatch(request, deliveryId, event, body, payload)));
  }

  /** Runs the delivery: the built-in handler, or the app (forwarding); what its id remembers. */
  async #run(request: WebhookRequest, event: string, body: Buffer, payload: JsonObject): Promise<Remembered> {
    const app = this.#app;
    if (app === undefined) return dispatch(event, payload);
    const answer = await app.send(request, body, this.config.forwardPath);
    if (!remembersAppAnswer(answer.status)) throw new AnswerNotRemembered(answer);
    return { appAnswer: answer };
  }

  #respond(value: Remembered, extra: { afterResponse?: () => void } = {}): WebhookResponse {
    return 'appAnswer' in value ? appResponse(value.appAnswer as AppAnswer, extra) : jsonResponse(200, value, extra);
  }

  async #dispatch(
    request: WebhookRequest,
    deliveryId: string,
    event: string,
    body: Buffer,
    payload: JsonObject,
  ): Promise<[WebhookResponse, string?, Record<string, unknown>?]> {
    // No listener at all when nobody subscribed: nothing to run after the response.
    const notify = this.#subscribers.has(event)
      ? () => this.#subscribers.notify({ id: deliveryId, event, payload })
      : undefined;
    const after = notify ? { afterResponse: notify } : {};
    const forwarded = (value: Remembered): Record<string, unknown> =>
      'appAnswer' in value ? { app: (value.appAnswer as AppAnswer).status } : {};
    try {
      if (deliveryId === '' || deliveryId.length > MAX_DELIVERY_ID_LENGTH) {
        const value = await this.#run(request, event, body, payload);
        return [this.#respond(value, after), undefined, forwarded(value)];
      }
      // The event is part of what "the same delivery" means, with the exact bytes.
      const digest = `${event}\n${createHash('sha256').update(body).digest('base64')}`;
      const outcome = await this.#deliveries.run(deliveryId, digest, () => this.#run(request, event, body, payload));
      switch (outcome.kind) {
        case 'first':
          return [this.#respond(outcome.value, after), undefined, forwarded(outcome.value)];
        case 'duplicate':
          return [this.#respond(outcome.value), undefined, { duplicate: true, ...forwarded(outcome.value) }];
        case 'conflict':
          // Named as the sender named it: the X-Forge family, else GitHub's.
          return [
            errorResponse(
              409,
              MESSAGES.conflict(
                request.headers['x-forge-delivery'] !== undefined ? 'X-Forge-Delivery' : 'X-GitHub-Delivery',
              ),
            ),
            'delivery id reused',
          ];
      }
    } catch (error) {
      if (error instanceof AnswerNotRemembered) {
        // The app's failure goes back to the sender as it is, and its id is not remembered: a retry reaches the app again.
        return [appResponse(error.answer), 'the app failed', { app: error.answer.status }];
      }
      if (error instanceof AppUnavailableError) {
        this.logger.warn({ reason: error.reason }, 'webhook delivery not passed on to the app');
        if (error.status === 503)
          return [errorResponse(503, MESSAGES.appBusy, { headers: { 'Retry-After': '5' } }), error.reason];
        return [
          errorResponse(error.status, error.status === 504 ? MESSAGES.appTimeout : MESSAGES.appUnreachable),
          error.reason,
        ];
      }
      if (error instanceof StoreUnavailableError) {
        // Whether it ran before cannot be told: not run, and the sender is asked to deliver it again.
        this.logger.warn({ reason: error.message }, 'webhook delivery turned away: the delivery store is unavailable');
        return [
          errorResponse(503, MESSAGES.storeUnavailable, { headers: { 'Retry-After': '5' } }),
          'delivery store unavailable',
        ];
      }
      this.logger.error({ err: describeError(error) }, 'webhook handler threw');
      return [errorResponse(500, MESSAGES.internal), 'handler error'];
    }
  }
}
