// The in-server host's side of the interception hook: a native request (from
// the web-server module, through the addon) becomes a RequestView for the very
// same AuthLayer.decide the sidecar runs, and its Decision becomes the native
// decision: the core's header edits, or a response.
import type { AuthLayer } from '../core/auth-layer.js';
import { BodyTooLargeError, type Decision, type RequestView } from '../core/http/request-view.js';

/** A request as the native hook hands it over. */
export interface NativeRequest {
  readonly method: string;
  readonly scheme: string;
  readonly host: string;
  readonly path: string;
  readonly query: string;
  readonly remoteAddress: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** Present only when the host read the body (it does for /.auth POSTs). */
  readonly body?: Buffer;
}

/** What the native hook applies. */
export type NativeDecision =
  | {
      readonly kind: 'continue';
      readonly remove: readonly string[];
      readonly set: ReadonlyArray<readonly [string, string]>;
    }
  | {
      readonly kind: 'respond';
      readonly status: number;
      readonly headers: Array<[string, string]>;
      readonly body: Buffer;
    };

function requestView(request: NativeRequest): RequestView {
  return {
    method: request.method,
    path: request.path,
    query: request.query,
    headers: request.headers,
    scheme: request.scheme === 'https' ? 'https' : 'http',
    host: request.host,
    remoteAddress: request.remoteAddress,
    readBody: async (limit) => {
      const body = request.body ?? Buffer.alloc(0);
      if (body.length > limit) throw new BodyTooLargeError(limit);
      return body;
    },
  };
}

/**
 * Decision → native decision. A forward becomes the core's edit list as the module applies it:
 * remove every header the edits name, then set the identity headers and X-Forwarded-*.
 */
export function nativeDecision(decision: Decision): NativeDecision {
  if (decision.kind === 'respond') {
    const headers: Array<[string, string]> = [];
    for (const [name, value] of Object.entries(decision.headers)) {
      for (const v of typeof value === 'string' ? [value] : value) headers.push([name, v]);
    }
    return { kind: 'respond', status: decision.status, headers, body: decision.body ?? Buffer.alloc(0) };
  }
  const { remove, set, forwarded } = decision.edits;
  return {
    kind: 'continue',
    remove,
    set: [
      ...set,
      ['X-Forwarded-For', forwarded.for],
      ['X-Forwarded-Proto', forwarded.proto],
      ['X-Forwarded-Host', forwarded.host],
    ],
  };
}

/**
 * The interceptor policy for the native hook: the sidecar's auth core, applied in-server.
 * A failure of the layer is logged here and rejects, and the native side answers 500 (fail closed).
 */
export function inServerPolicy(layer: AuthLayer): (request: NativeRequest) => Promise<NativeDecision> {
  const failed =
    (request: NativeRequest) =>
    (error: unknown): never => {
      layer.logger.error({ err: (error as Error).message, path: request.path }, 'auth layer failed');
      throw error;
    };
  return (request) => layer.decide(requestView(request)).then(nativeDecision, failed(request));
}
