// Typed access to the addon's interception hook (binding/addon/interceptor.cpp).
import { createRequire } from 'node:module';

import type { NativeDecision, NativeRequest } from '../inserver/policy.js';
import { ADDON_PATH } from './addon.js';

/** What a native host received for one replayed request. */
export interface ReplayedDecision {
  /** How many times the host's completion ran (exactly 1, always). */
  readonly completions: number;
  /** Submit to completion on the host thread, µs. */
  readonly micros: number;
  readonly kind: 'continue' | 'respond';
  readonly status?: number;
  readonly set?: Array<[string, string]>;
  readonly remove?: string[];
  readonly headers?: Array<[string, string]>;
  readonly body?: Buffer;
}

export interface NativeInterceptor {
  /** The native test host: submits the requests from `threads` native threads at once; resolves with their decisions, in order. */
  replay(requests: readonly NativeRequest[], threads: number): Promise<ReplayedDecision[]>;
  /** Requests submitted and not yet decided. */
  pendingCount(): number;
  /** Stops: pending and later requests are answered 503. */
  close(): void;
}

export type InterceptorPolicy = (request: NativeRequest) => NativeDecision | Promise<NativeDecision> | unknown;

/** Registers `policy` as the interceptor native hosts call (needs the native addon). */
export function createInterceptor(policy: InterceptorPolicy): NativeInterceptor {
  const { Interceptor } = createRequire(import.meta.url)(ADDON_PATH) as { Interceptor: new (policy: InterceptorPolicy) => NativeInterceptor };
  return new Interceptor(policy);
}
