// The headers a verified delivery reaches the app with: the sender's own, less what every request
// gatehouse forwards loses (the core's header policy with no identity: identity aliases and
// spoofable forwarding headers removed, X-Forwarded-* set; then the client's hop: hop-by-hop
// fields, what Connection names, Expect), plus X-Gatehouse-Webhook-Verified, which only gatehouse
// sets: any copy the sender sent, under any spelling an app's framework could read as that name
// (case, `_` or `.` for `-`), is removed first. The signature headers stay, so an app may verify
// again itself.
import type { IncomingHttpHeaders } from 'node:http';

import type { AuthConfig } from '../core/config/auth-config.js';
import { forwardEdits, type HeaderPolicy } from '../core/http/header-policy.js';
import { requestOrigin, type RequestView } from '../core/http/request-view.js';
import { namesWebhookVerified, WEBHOOK_VERIFIED_HEADER } from '../core/http/webhook-verified.js';
import { forwardHeaders } from '../sidecar/app.js';
import type { WebhookRequest } from './receiver.js';

/** Set on every delivery gatehouse passes on, and only on those: its signature was verified. */
export const VERIFIED_HEADER = WEBHOOK_VERIFIED_HEADER;
const VERIFIED_LOWER = VERIFIED_HEADER.toLowerCase();

function pairs(raw: readonly string[] | undefined, headers: IncomingHttpHeaders): Array<[string, string]> {
  if (raw === undefined)
    return Object.entries(headers).flatMap(([name, value]) =>
      Array.isArray(value)
        ? value.map((v) => [name, v] as [string, string])
        : value === undefined
          ? []
          : [[name, value] as [string, string]],
    );
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

export class DeliveryHeadersForApp {
  constructor(
    private readonly policy: HeaderPolicy,
    private readonly config: Pick<AuthConfig, 'forwardProxy'>,
  ) {}

  headersFor(request: WebhookRequest): IncomingHttpHeaders {
    const raw = pairs(request.rawHeaders, request.headers);
    const remoteAddress = request.remoteAddress ?? '';
    const host = typeof request.headers.host === 'string' ? request.headers.host : '';
    const view: RequestView = {
      method: request.method,
      path: '',
      query: '',
      headers: raw,
      scheme: 'http',
      host,
      remoteAddress,
      readBody: () => Promise.reject(new Error('the delivery has been read already')),
    };
    const origin = requestOrigin(view, this.config) ?? { scheme: 'http' as const, host };
    const out = forwardHeaders(request.headers, forwardEdits(this.policy, raw, null, origin, remoteAddress), false);
    for (const name of Object.keys(out)) if (namesWebhookVerified(name)) delete out[name];
    out[VERIFIED_LOWER] = 'true';
    return out;
  }
}
