import { secondsSince, type AuthMetrics } from '../auth-metrics.js';
import type { TokenStore } from './token-store.js';

/** `store`, with how long each get, put and delete took told to `metrics` (however it ended). */
export function timedStore<T>(store: TokenStore<T>, kind: string, metrics: AuthMetrics): TokenStore<T> {
  const timed = async <R>(operation: 'get' | 'put' | 'delete', call: () => Promise<R>): Promise<R> => {
    const started = performance.now();
    try {
      return await call();
    } finally {
      metrics.storeCall(kind, operation, secondsSince(started));
    }
  };
  return {
    get: (id) => timed('get', () => store.get(id)),
    put: (id, record, expiresAt) => timed('put', () => store.put(id, record, expiresAt)),
    delete: (id) => timed('delete', () => store.delete(id)),
    sweep: () => store.sweep(),
    ...(store.exclusive !== undefined ? { exclusive: store.exclusive.bind(store) } : {}),
    ...(store.changes !== undefined ? { changes: store.changes } : {}),
  };
}
