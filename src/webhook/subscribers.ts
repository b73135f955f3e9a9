import type { Logger } from '../logging.js';
import type { JsonObject } from './payload.js';
import { describeError } from './errors.js';

export interface Delivery {
  /** X-Forge-Delivery, or '' when absent. */
  readonly id: string;
  /** X-Forge-Event, or '' when absent. */
  readonly event: string;
  readonly payload: JsonObject;
}

export type Subscriber = (delivery: Delivery) => void | Promise<void>;

/** Event name to listen to, or '*' for every event. */
export type SubscriptionName = 'push' | 'pull_request' | 'issues' | '*' | (string & {});

/**
 * Subscribers run after the response has been sent, off the request path. A
 * subscriber that throws or rejects is logged; it never changes a response
 * and never stops the other subscribers.
 */
export class Subscribers {
  readonly #byEvent = new Map<string, Set<Subscriber>>();

  constructor(private readonly logger: Logger) {}

  add(event: SubscriptionName, subscriber: Subscriber): () => void {
    let set = this.#byEvent.get(event);
    if (set === undefined) {
      set = new Set();
      this.#byEvent.set(event, set);
    }
    set.add(subscriber);
    return () => {
      set.delete(subscriber);
    };
  }

  has(event: string): boolean {
    return (this.#byEvent.get(event)?.size ?? 0) > 0 || (this.#byEvent.get('*')?.size ?? 0) > 0;
  }

  /** Schedules every matching subscriber on a later turn of the event loop. */
  notify(delivery: Delivery): void {
    const targets = [...(this.#byEvent.get(delivery.event) ?? []), ...(this.#byEvent.get('*') ?? [])];
    for (const subscriber of targets) {
      setImmediate(() => {
        Promise.resolve()
          .then(() => subscriber(delivery))
          .catch((error: unknown) => {
            this.logger.error(
              { deliveryId: delivery.id, event: delivery.event, err: describeError(error) },
              'webhook subscriber failed',
            );
          });
      });
    }
  }
}
