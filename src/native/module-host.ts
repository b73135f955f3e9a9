// Typed access to the native test host that plays the web-server module
// (binding/host/module_host.cpp): a binary of its own, running the IIS
// module's portable parts. Tests and benchmarks attach an interceptor to it
// and replay requests from native threads.
import { createRequire } from 'node:module';
import path from 'node:path';

import type { NativeRequest } from '../inserver/policy.js';
import { ADDON_PATH } from './addon.js';
import type { HostLink } from './interceptor.js';

/** What the host applied for one replayed request. */
export interface HostedDecision {
  /** Completions the host received (the engine promises exactly 1). */
  readonly completions: number;
  /** Decided while being submitted (applied at once) rather than after the handler went pending. */
  readonly inline: boolean;
  /** Times the pending handler was resumed: 0 when inline, else 1. */
  readonly resumes: number;
  /** Whether the request's body was handed over (only under the attached body path prefix). */
  readonly bodyPassed: boolean;
  /** Submit to applicable decision on the host thread, µs. */
  readonly micros: number;
  /** When it was submitted: µs on the host's steady clock, comparable between the requests of one process only. */
  readonly submittedAt: number;
  readonly kind: 'continue' | 'respond';
  readonly status?: number;
  readonly set?: Array<[string, string]>;
  readonly remove?: string[];
  readonly headers?: Array<[string, string]>;
  readonly body?: Buffer;
}

export interface ModuleHost {
  /** Give this to NativeInterceptor.attachHost. */
  readonly link: HostLink;
  attached(): boolean;
  /**
   * Submits the requests from `threads` native threads at once; resolves with what each got, in order.
   * `details: false` leaves out the applied headers and body (set, remove, headers, body, status).
   */
  replay(requests: readonly NativeRequest[], threads: number, details?: boolean): Promise<HostedDecision[]>;
}

/** Beside the addon (build/Release). One per process, as a module is. */
export const MODULE_HOST_PATH = path.join(path.dirname(ADDON_PATH), 'gatehouse_module_host.node');

export function loadModuleHost(): ModuleHost {
  return createRequire(import.meta.url)(MODULE_HOST_PATH) as ModuleHost;
}
