import { createHmac } from 'node:crypto';

/** `sha256=<hex>` of HMAC-SHA256(secret, body): what a forge sends as X-Forge-Signature-256. */
export function signatureHeader(secret: string | Uint8Array, body: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}
