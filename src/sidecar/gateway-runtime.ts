// What both of gatehouse's HTTP gateways (the sidecar in front of an app, and forward
// authentication behind a web server) are given and start from alike: their shared options, the
// auth runtime, the metrics told of its token store, the access log when it is on, the webhook
// receiver and the verify endpoint.
import { startAuthRuntime, type AuthRuntime } from '../core/auth-runtime.js';
import type { AuthConfig } from '../core/config/auth-config.js';
import { decisionOutcome } from '../core/decision-outcome.js';
import { TRUSTED_PROXIES_VARIABLE, TrustedProxies } from '../core/forward-auth/trusted-proxies.js';
import { ForwardAuth } from '../core/forward-auth/verify.js';
import type { Decision } from '../core/http/request-view.js';
import { behindTrustedProxy } from '../core/http/request-view.js';
import type { PublishingChannel } from '../core/token-store/change-channel.js';
import type { Logger } from '../logging.js';
import type { GatehouseMetrics } from '../metrics/gatehouse-metrics.js';
import type { GatehouseCore } from '../native/types.js';
import type { WebhookApp } from '../webhook/app-forwarder.js';
import type { WebhookReceiverOptions } from '../webhook/config.js';
import { WebhookReceiver } from '../webhook/receiver.js';
import { AccessLog, resolveAccessLog } from './access-log.js';

/** The options of both gateways. */
export interface GatewayBaseOptions {
  readonly config: AuthConfig;
  readonly core: GatehouseCore;
  readonly logger: Logger;
  readonly env?: NodeJS.ProcessEnv;
  /** Master key; default GATEHOUSE_ENCRYPTION_KEY / WEBSITE_AUTH_ENCRYPTION_KEY, else a key file in the store directory. */
  readonly masterKey?: Buffer;
  readonly webhook?: WebhookReceiverOptions;
  /** How long a /.auth POST body may take to arrive in full (default 30 s). */
  readonly authBodyDeadlineMs?: number;
  readonly version?: string;
  readonly sessionCacheTtlMs?: number;
  /** One log line per request answered or forwarded (access-log.ts); default GATEHOUSE_ACCESS_LOG, else off. */
  readonly accessLog?: boolean;
  /** Where the workers sharing the token store directory tell each other of its changes (serve --workers). */
  readonly storeChannel?: PublishingChannel;
  /** Where requests, sign-ins, refreshes, logouts, store calls and deliveries are counted (--metrics-port). */
  readonly metrics?: GatehouseMetrics;
  /** Who may ask the verify endpoint (trusted-proxies.ts); default GATEHOUSE_TRUSTED_PROXIES, else loopback. */
  readonly trustedProxies?: string;
}

/** The peers the verify endpoint answers: the option, else GATEHOUSE_TRUSTED_PROXIES, else loopback. */
export function resolveTrustedProxies(option: string | undefined, env: NodeJS.ProcessEnv): TrustedProxies {
  const value = option ?? env[TRUSTED_PROXIES_VARIABLE];
  return TrustedProxies.parse(value === undefined || value.trim() === '' ? undefined : value);
}

export interface GatewayRuntime {
  readonly runtime: AuthRuntime;
  readonly accessLog: AccessLog | undefined;
  readonly receiver: WebhookReceiver;
  /** The verify endpoint, every request it judges counted. */
  readonly forwardAuth: ForwardAuth;
  /** Counts each decision of the protected path, when there are metrics. */
  readonly countDecision: ((path: string, decision: Decision) => void) | undefined;
}

/**
 * Starts what a gateway serves with: `app` is where verified webhook deliveries go (none: the
 * receiver's built-in handlers only). `trustedProxies` is resolved by the caller before anything
 * starts, so that a bad setting leaves nothing running.
 */
export async function startGatewayRuntime(
  options: GatewayBaseOptions,
  trustedProxies: TrustedProxies,
  app?: (started: Pick<GatewayRuntime, 'runtime' | 'accessLog' | 'countDecision'>) => WebhookApp,
): Promise<GatewayRuntime> {
  const { config, logger, metrics } = options;
  // Every request judged is counted: proxied ones and those a web server asks /.auth/verify about.
  const countDecision = decisionCounter(metrics, config.apiPrefix);
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
    ...(metrics ? { metrics } : {}),
  });
  metrics?.watchStore(runtime.store);
  const receiver = new WebhookReceiver({
    logger,
    core: options.core,
    ...(app ? { app: app({ runtime, accessLog, countDecision }) } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(runtime.redis ? { redis: runtime.redis } : {}),
    ...(metrics ? { onDelivery: (event: string, status: number) => metrics.delivery(event, status) } : {}),
    ...options.webhook,
  });
  const forwardAuth = new ForwardAuth({
    layer: runtime.layer,
    trustedProxies,
    headers: options.core,
    ...(countDecision ? { onDecision: countDecision } : {}),
  });
  return { runtime, accessLog, receiver, forwardAuth, countDecision };
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
