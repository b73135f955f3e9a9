import type { WebhookConfig } from '../webhook/config.js';

/** Where deliveries go, and, when no secret is set, that every one of them will get a 500 (docs/webhooks.md#error-responses) until it is. */
export function receiverLine(
  url: string,
  config: Pick<WebhookConfig, 'path' | 'secrets' | 'secretVariable' | 'forwardPath'>,
  forwardingTo?: string,
): string {
  const unconfigured =
    config.secrets.length === 0 ? ` (not configured: answers 500 until ${config.secretVariable} is set)` : '';
  const forwarded =
    forwardingTo !== undefined ? `; verified deliveries go on to ${forwardingTo}${config.forwardPath}` : '';
  return `webhook receiver: POST ${url}${config.path}${unconfigured}${forwarded}`;
}
