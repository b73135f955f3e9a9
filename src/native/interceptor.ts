// Typed access to the addon's interception hook (binding/addon/interceptor.cpp).
import { createRequire } from 'node:module';

import type { NativeDecision, NativeRequest } from '../inserver/policy.js';
import { ADDON_PATH } from './addon.js';

export interface NativeInterceptor {
  /**
   * Serves a web-server module in another binary (binding/iis, or the native
   * test host): `link` is the host's link object; requests whose path starts
   * with `bodyPathPrefix` reach the policy with their body. Replaces any
   * previous host; close() detaches.
   */
  attachHost(link: HostLink, bodyPathPrefix: string): void;
  /** Requests submitted and not yet decided. */
  pendingCount(): number;
  /** Wakes of the JavaScript thread that found requests, the requests they carried, and the largest batch. */
  crossingStats(): CrossingStats;
  /** Stops: pending and later requests are answered 503. */
  close(): void;
}

export interface CrossingStats {
  readonly batches: number;
  readonly requests: number;
  readonly largestBatch: number;
}

/** A host's link object (a tagged Node-API external, opaque to JavaScript). */
export type HostLink = object;

export type InterceptorPolicy = (request: NativeRequest) => NativeDecision | Promise<NativeDecision> | unknown;

/** Registers `policy` as the interceptor native hosts call (needs the native addon). */
export function createInterceptor(policy: InterceptorPolicy): NativeInterceptor {
  const { Interceptor } = createRequire(import.meta.url)(ADDON_PATH) as {
    Interceptor: new (
      policy: InterceptorPolicy,
      batchPolicy?: (requests: NativeRequest[]) => unknown[],
    ) => NativeInterceptor;
  };
  // Requests cross from native threads in batches (binding/addon/interceptor.cpp); each batch is one call
  // here: one result per request, in order. A throw answers that request alone (500). Measured against one
  // native call of `policy` per request in the same callback: 3-15 % more decisions/s at 8 and 64 threads.
  // After close() (from a policy earlier in the batch, say) the rest is not decided: the native side has
  // answered it 503 and reads no result for it.
  let closed = false;
  const batch = (requests: NativeRequest[]): unknown[] => {
    const results = new Array<unknown>(requests.length);
    for (let i = 0; i < requests.length && !closed; i++) {
      try {
        results[i] = policy(requests[i]!);
      } catch (error) {
        results[i] = Promise.reject(error);
      }
    }
    return results;
  };
  const native = new Interceptor(policy, batch);
  return {
    attachHost: (link, bodyPathPrefix) => native.attachHost(link, bodyPathPrefix),
    pendingCount: () => native.pendingCount(),
    crossingStats: () => native.crossingStats(),
    close: () => {
      closed = true;
      native.close();
    },
  };
}
