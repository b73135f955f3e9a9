// X-Gatehouse-Webhook-Verified: the header gatehouse sets on a webhook delivery whose signature it
// verified and passes on to the app, and on nothing else (docs/webhooks.md). Whatever reaches the
// app under that name must be gatehouse's: a client's copy, under any spelling an app's framework
// could read as it, is removed by the sidecar and refused by the verify endpoint, behind which
// gatehouse cannot strip it.
import { canonicalHeaderName } from './header-policy.js';

export const WEBHOOK_VERIFIED_HEADER = 'X-Gatehouse-Webhook-Verified';

const CANONICAL = canonicalHeaderName(WEBHOOK_VERIFIED_HEADER);

/** Whether `name` is X-Gatehouse-Webhook-Verified under some spelling (case, `_` or `.` for `-`). */
export function namesWebhookVerified(name: string): boolean {
  return name.length === CANONICAL.length && canonicalHeaderName(name) === CANONICAL;
}
