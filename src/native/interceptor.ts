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
  /** Stops: pending and later requests are answered 503. */
  close(): void;
}

/** A host's link object (a tagged Node-API external, opaque to JavaScript). */
export type HostLink = object;

export type InterceptorPolicy = (request: NativeRequest) => NativeDecision | Promise<NativeDecision> | unknown;

/** Registers `policy` as the interceptor native hosts call (needs the native addon). */
export function createInterceptor(policy: InterceptorPolicy): NativeInterceptor {
  const { Interceptor } = createRequire(import.meta.url)(ADDON_PATH) as { Interceptor: new (policy: InterceptorPolicy) => NativeInterceptor };
  return new Interceptor(policy);
}
