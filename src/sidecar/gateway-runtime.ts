// What both of gatehouse's HTTP gateways (the sidecar in front of an app, and forward
// authentication behind a web server) start from their options alike: the auth runtime, the
// metrics told of its token store, and the access log when it is on.
import { startAuthRuntime, type AuthRuntime } from '../core/auth-runtime.js';
import { decisionOutcome } from '../core/decision-outcome.js';
import type { Decision } from '../core/http/request-view.js';
import type { GatehouseMetrics } from '../metrics/gatehouse-metrics.js';
import { behindTrustedProxy } from '../core/http/origin.js';
import { AccessLog, resolveAccessLog } from './access-log.js';
import type { GatewayOptions } from './gateway.js';

export type GatewayRuntimeOptions = Pick<
  GatewayOptions,
  | 'config'
  | 'logger'
  | 'core'
  | 'env'
  | 'masterKey'
  | 'version'
  | 'sessionCacheTtlMs'
  | 'storeChannel'
  | 'metrics'
  | 'accessLog'
>;

export async function startGatewayRuntime(
  options: GatewayRuntimeOptions,
): Promise<{ runtime: AuthRuntime; accessLog: AccessLog | undefined }> {
  const { config, logger } = options;
  const env = options.env ?? process.env;
  // Before the runtime: a bad setting stops the start with nothing left running.
  const accessLog = resolveAccessLog(options.accessLog, env)
    ? new AccessLog(logger, { trustForwardedFor: behindTrustedProxy(config) })
    : undefined;
  const runtime = await startAuthRuntime({
    config,
    logger,
    headers: options.core,
    ...(options.env ? { env: options.env } : {}),
    ...(options.masterKey ? { masterKey: options.masterKey } : {}),
    ...(options.version ? { version: options.version } : {}),
    ...(options.sessionCacheTtlMs !== undefined ? { sessionCacheTtlMs: options.sessionCacheTtlMs } : {}),
    ...(options.storeChannel ? { storeChannel: options.storeChannel } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  options.metrics?.watchStore(runtime.store);
  return { runtime, accessLog };
}

/** What counts each decision in the request metrics (by outcome and reason), when there are metrics. */
export function decisionCounter(
  metrics: GatehouseMetrics | undefined,
  apiPrefix: string,
): ((path: string, decision: Decision) => void) | undefined {
  if (metrics === undefined) return undefined;
  return (path, decision) => {
    const { outcome, reason } = decisionOutcome(path, apiPrefix, decision);
    metrics.request(outcome, reason);
  };
}
