// The headers that make a delivery, in the two families gatehouse accepts: its own
// (X-Forge-Signature-256, X-Forge-Event, X-Forge-Delivery) and GitHub's (X-Hub-Signature-256,
// X-GitHub-Event, X-GitHub-Delivery), so that a GitHub webhook can point at gatehouse as it is.
// Either family alone is a delivery. When both are sent, nothing is chosen between them: every
// signature sent must verify, and the two events (or the two delivery ids) must be the same text,
// else the delivery is refused (401, 400). A sender cannot make gatehouse verify one header while
// the app, or gatehouse's de-duplication, reads the other.
import type { IncomingHttpHeaders } from 'node:http';

export interface HeaderFamily {
  readonly name: string;
  readonly signature: string;
  readonly event: string;
  readonly delivery: string;
}

/** Lower-case names, as node:http gives them. */
export const HEADER_FAMILIES: readonly HeaderFamily[] = [
  { name: 'X-Forge', signature: 'x-forge-signature-256', event: 'x-forge-event', delivery: 'x-forge-delivery' },
  { name: 'GitHub', signature: 'x-hub-signature-256', event: 'x-github-event', delivery: 'x-github-delivery' },
];

const EVENT_NAMES = HEADER_FAMILIES.map((f) => f.event);
const DELIVERY_NAMES = HEADER_FAMILIES.map((f) => f.delivery);

export interface DeliveryHeaders {
  /** Every signature header sent, of either family (none: unsigned). */
  readonly signatures: readonly string[];
  /** The event, from whichever family sent it ('' when none did). */
  readonly event: string;
  /** The delivery id, from whichever family sent it ('' when none did). */
  readonly deliveryId: string;
  /** Both families sent an event (or a delivery id) and they differ: what to tell the sender. */
  readonly disagreement?: string;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The one value both families agree on (or the only one sent); `false` when they differ. */
function agreed(headers: IncomingHttpHeaders, names: readonly string[]): string | undefined | false {
  let found: string | undefined;
  for (const name of names) {
    const value = header(headers, name);
    if (value === undefined) continue;
    if (found !== undefined && value !== found) return false;
    found = value;
  }
  return found;
}

export function readDeliveryHeaders(headers: IncomingHttpHeaders): DeliveryHeaders {
  const signatures: string[] = [];
  for (const family of HEADER_FAMILIES) {
    const value = header(headers, family.signature);
    if (value !== undefined) signatures.push(value);
  }
  const event = agreed(headers, EVENT_NAMES);
  const deliveryId = agreed(headers, DELIVERY_NAMES);
  const disagreement =
    event === false
      ? 'X-Forge-Event and X-GitHub-Event disagree; send one, or the same value in both.'
      : deliveryId === false
        ? 'X-Forge-Delivery and X-GitHub-Delivery disagree; send one, or the same value in both.'
        : undefined;
  return {
    signatures,
    event: event === false ? (header(headers, 'x-forge-event') ?? '') : (event ?? ''),
    deliveryId: deliveryId === false ? (header(headers, 'x-forge-delivery') ?? '') : (deliveryId ?? ''),
    ...(disagreement ? { disagreement } : {}),
  };
}
