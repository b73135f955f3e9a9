// gatehouse's metrics, in a registry of their own (prom-client): what the auth
// core reports (sign-ins, refreshes, logouts, provider latency), what the hosts
// see (each request's outcome, upstream failures, webhook deliveries) and the
// token store (latency per operation, whether it can be reached). Names and
// labels follow Prometheus' conventions: `gatehouse_` prefix, `_total` on
// counters, base units (`_seconds`); label values are fixed words and provider
// aliases, never a user, a session, a path or another caller's choice.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

import type {
  AuthMetrics,
  AuthorizationRefusalReason,
  LogoutKind,
  ProviderOperation,
  RefreshResult,
  SignInResult,
  StoreOperation,
} from '../core/auth-metrics.js';
import type { Outcome } from '../core/decision-outcome.js';

/** Latency buckets (seconds) for calls that leave the process: the store, the provider. */
const CALL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export type UpstreamFailure = 'timeout' | 'error' | 'full';

export class GatehouseMetrics implements AuthMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'outcome' | 'reason'>;
  readonly #signIns: Counter<'provider' | 'result'>;
  readonly #refreshes: Counter<'provider' | 'result'>;
  readonly #logouts: Counter<'provider' | 'kind'>;
  readonly #providerCalls: Histogram<'provider' | 'operation'>;
  readonly #storeCalls: Histogram<'store' | 'operation'>;
  readonly #upstreamFailures: Counter<'kind'>;
  readonly #deliveries: Counter<'event' | 'status'>;
  readonly #authorizationRefusals: Counter<'reason' | 'rule'>;

  /** The token store whose state the gauge tells, once the runtime has started it. */
  #store: { readonly kind: string; readonly available: boolean } | undefined;

  constructor() {
    const registers = [this.registry];
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- prom-client calls collect() with its own `this`
    const metrics = this;
    collectDefaultMetrics({ register: this.registry });
    this.#requests = new Counter({
      name: 'gatehouse_requests_total',
      help: "Requests judged, by outcome (forwarded, challenged, refused, auth_route) and its reason (a refusal's cause, or which /.auth route)",
      labelNames: ['outcome', 'reason'],
      registers,
    });
    this.#signIns = new Counter({
      name: 'gatehouse_sign_ins_total',
      help: 'Sign-in callbacks, by provider and result',
      labelNames: ['provider', 'result'],
      registers,
    });
    this.#refreshes = new Counter({
      name: 'gatehouse_refreshes_total',
      help: 'Token refreshes at the provider, by provider and result',
      labelNames: ['provider', 'result'],
      registers,
    });
    this.#logouts = new Counter({
      name: 'gatehouse_logouts_total',
      help: 'Sessions ended by a logout here (local) or reported by the provider (provider)',
      labelNames: ['provider', 'kind'],
      registers,
    });
    this.#providerCalls = new Histogram({
      name: 'gatehouse_provider_request_duration_seconds',
      help: 'Calls to an identity provider (code exchange, refresh)',
      labelNames: ['provider', 'operation'],
      buckets: CALL_BUCKETS,
      registers,
    });
    this.#storeCalls = new Histogram({
      name: 'gatehouse_token_store_operation_duration_seconds',
      help: 'Token store operations, however they ended',
      labelNames: ['store', 'operation'],
      buckets: CALL_BUCKETS,
      registers,
    });
    this.#upstreamFailures = new Counter({
      name: 'gatehouse_upstream_failures_total',
      help: 'Requests the app did not answer: timeout (504), error (502), full (503: the connection pool and its queue were full)',
      labelNames: ['kind'],
      registers,
    });
    this.#deliveries = new Counter({
      name: 'gatehouse_webhook_deliveries_total',
      help: 'Webhook deliveries answered, by event (one gatehouse handles, else "other") and status',
      labelNames: ['event', 'status'],
      registers,
    });
    this.#authorizationRefusals = new Counter({
      name: 'gatehouse_authorization_refusals_total',
      help: 'Signed-in callers an authorization rule refused (403), by reason (not_allowed, groups_incomplete) and the rule (default, paths.<n>, or the directory policy key)',
      labelNames: ['reason', 'rule'],
      registers,
    });
    // Across workers, the lowest: 0 as soon as one worker cannot reach the store.
    new Gauge({
      name: 'gatehouse_token_store_up',
      help: 'Whether the token store can be reached (1) or not (0)',
      labelNames: ['store'],
      registers,
      aggregator: 'min',
      collect() {
        const store = metrics.#store;
        if (store !== undefined) this.set({ store: store.kind }, store.available ? 1 : 0);
      },
    });
  }

  watchStore(store: { readonly kind: string; readonly available: boolean }): void {
    this.#store = store;
  }

  request(outcome: Outcome, reason: string): void {
    this.#requests.inc({ outcome, reason });
  }

  signIn(provider: string, result: SignInResult): void {
    this.#signIns.inc({ provider, result });
  }

  refresh(provider: string, result: RefreshResult): void {
    this.#refreshes.inc({ provider, result });
  }

  logout(provider: string, kind: LogoutKind): void {
    this.#logouts.inc({ provider, kind });
  }

  providerCall(provider: string, operation: ProviderOperation, seconds: number): void {
    this.#providerCalls.observe({ provider, operation }, seconds);
  }

  storeCall(store: string, operation: StoreOperation, seconds: number): void {
    this.#storeCalls.observe({ store, operation }, seconds);
  }

  authorizationRefused(reason: AuthorizationRefusalReason, rule: string): void {
    this.#authorizationRefusals.inc({ reason, rule });
  }

  upstreamFailure(kind: UpstreamFailure): void {
    this.#upstreamFailures.inc({ kind });
  }

  delivery(event: string, status: number): void {
    this.#deliveries.inc({ event, status: String(status) });
  }
}
