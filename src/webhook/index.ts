export { WebhookReceiver, MESSAGES, type WebhookRequest } from './receiver.js';
export {
  resolveWebhookConfig,
  parsePreviousSecrets,
  WebhookConfigError,
  DEFAULT_WEBHOOK_PATH,
  DEFAULT_BODY_LIMIT_BYTES,
  type WebhookReceiverOptions,
  type WebhookConfig,
} from './config.js';
export { createNodeHandler, type NodeHandler } from './node-handler.js';
export { createKoaMiddleware } from './koa-middleware.js';
export {
  UpstreamWebhookApp,
  AppUnavailableError,
  APP_ANSWER_LIMIT_BYTES,
  type AppAnswer,
  type WebhookApp,
} from './app-forwarder.js';
export { VERIFIED_HEADER } from './app-headers.js';
export { HEADER_FAMILIES } from './delivery-headers.js';
export type { Delivery, Subscriber, SubscriptionName } from './subscribers.js';
export type { WebhookResponse } from './response.js';
export type { JsonObject } from './payload.js';
export type { EventSummary } from './handlers/index.js';
