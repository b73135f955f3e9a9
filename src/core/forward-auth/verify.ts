// GET {apiPrefix}/verify: forward authentication. A web server in front (nginx auth_request,
// Caddy forward_auth, Traefik ForwardAuth) asks whether to let a request through; gatehouse
// answers with the decision the sidecar would make for that request (AuthLayer.decide: excluded
// paths, session cookie, bearer token, implicit refresh, unauthenticatedClientAction), and the
// web server proxies. The answers:
//
// - allowed: 200, the identity headers as response headers (none for an anonymous request the
//   configuration lets through), no body: the web server copies them onto the app's request;
// - refused: what the sidecar would answer (a 302 to sign in for a browser, 401 for an API
//   caller, 403 …), which Traefik and Caddy relay to the client as it is. nginx passes on only
//   401 and 403 (anything else is its 500), so under its convention every refusal but a 403 is a
//   401, which the shipped configuration turns into the sidecar's answer by asking again under the
//   forwarded convention (examples/nginx/gatehouse.conf, @gatehouse_challenge).
//
// Only a trusted peer's question is read (403 otherwise); a request to one of gatehouse's own
// routes is never judged here (it must reach gatehouse itself, and verify must not sign anyone
// out); and a request carrying an identity header or a path or method override of its own is
// refused, since behind a web server gatehouse cannot strip what reaches the app. For the same
// reason an upgrade the core does not judge as one (anything but a WebSocket handshake: h2c in
// any spelling, core/http/protocol-upgrade.ts) is refused (400) rather than ignored: the web server
// would pass it on, and the app could switch to a protocol on which nothing more is asked.
//
// With gatehouse.verifyCache on, an allowed answer that names a caller says how long the web server
// may keep it (Cache-Control: private, max-age=N and nginx's X-Accel-Expires: N; answer-lifetime.ts
// says which and how long), and every other answer says it may not be kept (X-Accel-Expires: 0, which
// nginx obeys whatever its own configuration says).
import type { AuthLayer } from '../auth-layer.js';
import type { Decision, RequestView, RespondDecision } from '../http/request-view.js';
import { emptyDecision, jsonDecision } from '../http/responses.js';
import { namesWebhookVerified } from '../http/webhook-verified.js';
import { UPGRADE_REFUSED_MESSAGE, upgradeKindOf } from '../http/protocol-upgrade.js';
import {
  FORWARDING_HEADERS_SET_BY_GATEHOUSE,
  inboundAliases,
  isSpoofedForwarding,
  mayConcernForwarding,
  type HeaderNormalizer,
} from '../http/header-policy.js';
import { keptSeconds } from './answer-lifetime.js';
import type { VerifyCacheSettings } from './cache-settings.js';
import { readOriginalRequest, type Convention } from './original-request.js';
import type { TrustedProxies } from './trusted-proxies.js';

export interface ForwardAuthOptions {
  readonly layer: AuthLayer;
  readonly trustedProxies: TrustedProxies;
  /** The shared core's header normalization: which inbound headers are identity aliases. */
  readonly headers: HeaderNormalizer;
  /** Told of each decision made on an original request (its path, as judged): the request metrics. */
  readonly onDecision?: (path: string, decision: Decision) => void;
  /** The clock a token's expiry is read against (default Date.now). */
  readonly now?: () => number;
}

/** The verify endpoint's own path under the prefix. */
export const VERIFY_ROUTE = '/verify';

export const UNTRUSTED_PEER_MESSAGE =
  'The verify endpoint answers only the web servers in front of gatehouse (GATEHOUSE_TRUSTED_PROXIES).';
export const OWN_ROUTE_MESSAGE =
  "gatehouse's own routes are not judged by the verify endpoint: the web server must send them to gatehouse.";
export const SPOOFED_MESSAGE = 'The request carries identity or override headers of its own.';

const ALLOWED_ANONYMOUS: RespondDecision = Object.freeze({
  kind: 'respond',
  status: 200,
  headers: Object.freeze({ 'Cache-Control': 'no-store' }),
  body: Buffer.alloc(0),
});

/** What tells nginx not to keep an answer, whatever its proxy_cache_valid says. */
const NOT_KEPT = Object.freeze({ 'X-Accel-Expires': '0' });

const ALLOWED_ANONYMOUS_NOT_KEPT: RespondDecision = Object.freeze({
  ...ALLOWED_ANONYMOUS,
  headers: Object.freeze({ ...ALLOWED_ANONYMOUS.headers, ...NOT_KEPT }),
});

/** The headers of an answer a web server may keep for `seconds`. */
function keptFor(seconds: number): Readonly<Record<string, string>> {
  return Object.freeze({ 'Cache-Control': `private, max-age=${seconds}`, 'X-Accel-Expires': String(seconds) });
}

export class ForwardAuth {
  readonly #layer: AuthLayer;
  readonly #trusted: TrustedProxies;
  readonly #headers: HeaderNormalizer;
  readonly #onDecision: ((path: string, decision: Decision) => void) | undefined;
  /** The 200 for each identity's header set (the core shares one set per identity): built once. */
  readonly #allowed = new WeakMap<ReadonlyArray<readonly [string, string]>, RespondDecision>();
  /** The same, marked to be kept for the configured lifetime (gatehouse.verifyCache). */
  readonly #allowedKept = new WeakMap<ReadonlyArray<readonly [string, string]>, RespondDecision>();
  readonly #cache: VerifyCacheSettings | undefined;
  /** Header names the original must not carry: those the configuration reads the origin from (forwardProxy Custom). */
  readonly #withheld: readonly string[];
  readonly #now: () => number;

  constructor(options: ForwardAuthOptions) {
    this.#layer = options.layer;
    this.#trusted = options.trustedProxies;
    this.#headers = options.headers;
    this.#onDecision = options.onDecision;
    this.#cache = options.layer.config.verifyCache;
    const proxy = options.layer.config.forwardProxy;
    this.#withheld =
      proxy.convention === 'Custom'
        ? [proxy.hostHeader, proxy.protoHeader].flatMap((name) => (name ? [name.toLowerCase()] : []))
        : [];
    this.#now = options.now ?? Date.now;
    this.path = `${options.layer.config.apiPrefix}${VERIFY_ROUTE}`;
  }

  /** The verify endpoint's path: `/verify` under the API prefix, matched exactly (front door). */
  readonly path: string;

  /** The answer to one verify request (`view`: the request the web server sent gatehouse). */
  async answer(view: RequestView): Promise<RespondDecision> {
    const answer = await this.#answer(view);
    if (this.#cache === undefined || answer.headers['X-Accel-Expires'] !== undefined) return answer;
    return answer === ALLOWED_ANONYMOUS
      ? ALLOWED_ANONYMOUS_NOT_KEPT
      : { ...answer, headers: { ...answer.headers, ...NOT_KEPT } };
  }

  async #answer(view: RequestView): Promise<RespondDecision> {
    const { logger, config } = this.#layer;
    if (!this.#trusted.trusts(view.remoteAddress)) {
      logger.info({ reason: 'verify from an untrusted peer', remoteAddress: view.remoteAddress }, 'request rejected');
      return jsonDecision(403, { error: UNTRUSTED_PEER_MESSAGE });
    }
    if (view.method !== 'GET' && view.method !== 'HEAD')
      return jsonDecision(405, { error: 'Method not allowed.' }, { headers: { Allow: 'GET, HEAD' } });
    const original = readOriginalRequest(view, this.#withheld);
    if ('problem' in original) {
      logger.warn({ reason: original.problem }, 'verify request rejected');
      return jsonDecision(400, { error: `Bad verify request: ${original.problem}.` });
    }
    const { convention, view: judged } = original;
    const prefix = config.apiPrefix;
    if (judged.path === prefix || judged.path.startsWith(`${prefix}/`)) {
      logger.warn(
        { reason: 'verify asked about an authentication route', path: judged.path },
        'verify request rejected',
      );
      return jsonDecision(403, { error: OWN_ROUTE_MESSAGE });
    }
    const spoofed = this.#spoofedHeader(judged.headers);
    if (spoofed !== undefined) {
      logger.info(
        { reason: 'identity or override header from the client', header: spoofed, path: judged.path },
        'request rejected',
      );
      return jsonDecision(403, { error: SPOOFED_MESSAGE });
    }
    const decision =
      upgradeKindOf(judged) === 'other' ? this.#refusedUpgrade(judged.path) : await this.#layer.decide(judged);
    this.#onDecision?.(judged.path, decision);
    if (decision.kind === 'forward')
      return this.#allowedAnswer(
        decision.edits.set,
        keptSeconds(decision, judged, this.#cache, this.#now(), config.authorization),
      );
    return this.#answerFor(decision, convention);
  }

  /** The name of a header the app must never get from a client and no web server strips for it, if the request has one. */
  #spoofedHeader(headers: ReadonlyArray<readonly [string, string]>): string | undefined {
    const { config } = this.#layer;
    const aliases = inboundAliases(this.#headers, headers, {
      prefix: config.headerPrefix,
      exposeTokens: config.tokenStore.enabled,
    });
    if (aliases.length > 0) return aliases[0];
    for (const [name] of headers) {
      // Both families start with "x", "f" or "t" (X-Gatehouse-Webhook-Verified with "x" in every
      // spelling): the other headers are passed over without a lower-cased copy of their name.
      if (!mayConcernForwarding(name)) continue;
      const lower = name.toLowerCase();
      // The web server's own X-Forwarded-For (and -Host, -Proto), as it always sends them.
      if (FORWARDING_HEADERS_SET_BY_GATEHOUSE.has(lower)) continue;
      if (isSpoofedForwarding(lower, true)) return name;
      if (namesWebhookVerified(name)) return name;
    }
    return undefined;
  }

  /** An upgrade that must not reach the app: a 400 (behind nginx, the 401 its challenge location asks again about). */
  #refusedUpgrade(path: string): RespondDecision {
    this.#layer.logger.info({ reason: 'upgrade other than WebSocket', path }, 'request rejected');
    return jsonDecision(400, { error: UPGRADE_REFUSED_MESSAGE });
  }

  #answerFor(decision: RespondDecision, convention: Convention): RespondDecision {
    if (decision.status < 300) {
      // No refusal is a 2xx: read as one, it would let the request through.
      this.#layer.logger.error({ status: decision.status }, 'verify: a refusal with a success status');
      return jsonDecision(500, { error: 'Internal error.' });
    }
    if (convention === 'forwarded' || decision.status === 403) return decision;
    const challenge = emptyDecision(401);
    const wwwAuthenticate = decision.headers['WWW-Authenticate'];
    return wwwAuthenticate === undefined
      ? challenge
      : { ...challenge, headers: { ...challenge.headers, 'WWW-Authenticate': wwwAuthenticate } };
  }

  /** The 200 for an identity's headers, kept for `seconds` (0: not kept). */
  #allowedAnswer(set: ReadonlyArray<readonly [string, string]>, seconds: number): RespondDecision {
    if (set.length === 0) return ALLOWED_ANONYMOUS;
    // The usual lifetime's answer is built once per identity, as the unkept one; a shorter one (a
    // token about to expire) for that request alone.
    const usual = seconds === 0 || seconds === this.#cache?.maxAgeSeconds;
    const built = seconds === 0 ? this.#allowed : this.#allowedKept;
    let answer = usual ? built.get(set) : undefined;
    if (answer === undefined) {
      const marking = seconds === 0 ? ALLOWED_ANONYMOUS.headers : keptFor(seconds);
      answer = Object.freeze({
        ...ALLOWED_ANONYMOUS,
        headers: Object.freeze({ ...marking, ...Object.fromEntries(set) }),
      });
      if (usual) built.set(set, answer);
    }
    return answer;
  }
}
