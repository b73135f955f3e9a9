// A development OpenID provider (oidc-provider) on loopback: real OIDC, real
// signed ID tokens, a small sign-in page. Used by `gatehouse dev` and by the
// sign-in tests. Never for production: users and keys live in memory.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import Provider, { interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

import { escapeHtml } from '../core/http/responses.js';
import { memoryAdapter } from './memory-adapter.js';
import { generateRsaKeyPair } from './rsa-key-pair.js';

/** oidc-provider's default, said here because the storage keeps entries that much past their expiry. */
const CLOCK_TOLERANCE_SECONDS = 15;

export interface DevUser {
  readonly password: string;
  readonly claims: Readonly<Record<string, unknown>>;
}

export interface DevClient {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUris: readonly string[];
  readonly postLogoutRedirectUris: readonly string[];
  /** Default client_secret_basic. */
  readonly tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post';
  /** Where the provider posts a logout token when a user's session here ends (OpenID Connect Back-Channel Logout). */
  readonly backchannelLogoutUri?: string;
  /**
   * Default true: ID tokens and logout tokens carry the provider session's `sid`, so a logout ends
   * the sign-ins made in that session only; false: logout tokens name the user (`sub`) alone.
   */
  readonly backchannelLogoutSessionRequired?: boolean;
  /** More client metadata (a `jwks` and `token_endpoint_auth_method: 'private_key_jwt'`, `require_pushed_authorization_requests`…). */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

export interface DevIdentityProviderOptions {
  readonly port?: number;
  /** The address to listen on (default 127.0.0.1: this machine only). */
  readonly host?: string;
  /** The host name in the issuer, which browsers are sent to (default: the address listened on). */
  readonly publicHost?: string;
  readonly users?: Readonly<Record<string, DevUser>>;
  readonly clients: readonly DevClient[];
  /** Access token lifetime in seconds (default 3600). */
  readonly accessTokenTtl?: number;
  /**
   * Issue a new refresh token on every refresh, as many providers do (default: oidc-provider's
   * own rule, which rotates only public clients' tokens or old ones). Either way, a refresh
   * token used again after it was replaced revokes the whole grant.
   */
  readonly rotateRefreshTokens?: boolean;
  /** A path the issuer identifier ends with (e.g. `/<tenant>/v2.0`); its endpoints live under it. */
  readonly issuerPath?: string;
  /** Which claims each scope releases (default: sub; profile: name, preferred_username, roles; email). */
  readonly claims?: Configuration['claims'];
  /** Extra Koa middleware for the provider (shaping answers the way another provider does). */
  readonly middleware?: ReadonlyArray<Parameters<Provider['use']>[0]>;
  /**
   * Keep the ID token thin, as Okta does by default: with an access token issued, the scopes' claims
   * (name, email, roles) come from the userinfo endpoint only, and the ID token carries `sub` alone.
   */
  readonly thinIdToken?: boolean;
  /** Handles a request before the provider does; returns true when it answered. */
  readonly intercept?: (req: IncomingMessage, res: ServerResponse, issuer: string) => boolean;
  /** More of oidc-provider's features turned on (introspection, pushedAuthorizationRequests, dPoP…). */
  readonly features?: Configuration['features'];
}

export interface RunningIdentityProvider {
  readonly issuer: string;
  readonly provider: Provider;
  /** Sign-in counts per user, for tests. */
  readonly logins: Map<string, number>;
  /** Successful token-endpoint grants by grant type, for tests. */
  readonly grants: Map<string, number>;
  /** Back-channel logout deliveries, in order: the client, and the error if the client did not answer 200. */
  readonly backchannelLogouts: Array<{ readonly clientId: string; readonly error?: string }>;
  close(): Promise<void>;
}

/**
 * oidc-provider's interactions plus an account picker, as Microsoft's and Google's providers have:
 * `prompt=select_account` shows the sign-in form (where any user can sign in) even to a browser
 * signed in already, instead of reusing its session.
 */
function accountPickerPolicy(): interactionPolicy.DefaultPolicy {
  const policy = interactionPolicy.base();
  policy.add(new interactionPolicy.Prompt({ name: 'select_account', requestable: true }), 0);
  return policy;
}

export const DEMO_USERS: Readonly<Record<string, DevUser>> = {
  demo: {
    password: 'demo',
    claims: {
      name: 'Dev User',
      preferred_username: 'demo',
      email: 'demo@example.com',
      email_verified: true,
      roles: ['admin', 'reader'],
    },
  },
  // A second person, to try switching accounts and roles.
  reader: {
    password: 'reader',
    claims: {
      name: 'Read Only',
      preferred_username: 'reader',
      email: 'reader@example.com',
      email_verified: true,
      roles: ['reader'],
    },
  },
};

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:22rem;margin:4rem auto;padding:0 1rem}label{display:block;margin:.6rem 0}input{width:100%;padding:.4rem}button{margin-top:.8rem;padding:.5rem 1rem}</style></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

async function formBody(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 16 * 1024) throw new Error('form too large');
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function send(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(html);
}

/** A host as a URL's authority carries it: an IPv6 address bracketed (once). */
export function hostInUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

export async function startDevIdentityProvider(options: DevIdentityProviderOptions): Promise<RunningIdentityProvider> {
  const users = options.users ?? DEMO_USERS;
  const logins = new Map<string, number>();
  const server = http.createServer();
  const host = options.host ?? '127.0.0.1';
  server.listen(options.port ?? 0, host);
  await once(server, 'listening');
  const origin = `http://${hostInUrl(options.publicHost ?? host)}:${(server.address() as AddressInfo).port}`;
  const issuerPath = options.issuerPath ?? '';
  const issuer = `${origin}${issuerPath}`;

  // Not generateKeyPairSync's own key object: exported as JWK it can hang Node 20 (rsa-key-pair.ts).
  const { privateKey } = generateRsaKeyPair();
  const jwk = {
    ...privateKey.export({ format: 'jwk' }),
    kid: randomBytes(8).toString('hex'),
    use: 'sig',
    alg: 'RS256',
  };

  const configuration: Configuration = {
    clients: options.clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: [...c.redirectUris],
      post_logout_redirect_uris: [...c.postLogoutRedirectUris],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: c.tokenEndpointAuthMethod ?? 'client_secret_basic',
      ...(c.backchannelLogoutUri !== undefined
        ? {
            backchannel_logout_uri: c.backchannelLogoutUri,
            backchannel_logout_session_required: c.backchannelLogoutSessionRequired ?? true,
          }
        : {}),
      ...c.metadata,
    })),
    adapter: memoryAdapter(CLOCK_TOLERANCE_SECONDS),
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
    jwks: { keys: [jwk as never] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    pkce: { required: () => true },
    conformIdTokenClaims: options.thinIdToken ?? false,
    claims: options.claims ?? {
      openid: ['sub'],
      profile: ['name', 'preferred_username', 'roles'],
      email: ['email', 'email_verified'],
    },
    scopes: ['openid', 'profile', 'email', 'offline_access'],
    ttl: {
      AccessToken: options.accessTokenTtl ?? 3600,
      IdToken: 3600,
      RefreshToken: 24 * 3600,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ...(options.rotateRefreshTokens ? { rotateRefreshToken: true } : {}),
    findAccount: async (_ctx, id) => {
      const user = users[id];
      if (user === undefined) return undefined;
      return { accountId: id, claims: async () => ({ sub: id, ...user.claims }) };
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}`, policy: accountPickerPolicy() },
    // Said, as providers with an account picker do, so that relying parties may ask for it.
    discovery: { prompt_values_supported: ['none', 'login', 'consent', 'select_account'] },
    features: {
      devInteractions: { enabled: false },
      // A client may revoke its own tokens only, as at real providers.
      revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      backchannelLogout: { enabled: true },
      ...options.features,
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx: KoaContextWithOIDC, form: string) => {
          ctx.body = page(
            'Sign out',
            `${form}<p>Sign out of the development identity provider?</p><button type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>`,
          );
        },
        postLogoutSuccessSource: async (ctx: KoaContextWithOIDC) => {
          ctx.body = page('Signed out', '<p>You are signed out.</p>');
        },
      },
    },
    // oidc-provider refuses to call special-use addresses (SSRF protection: loopback, private networks).
    // The one thing this provider calls is the back-channel logout URL its clients were configured
    // with, by gatehouse dev or a test: the gatehouse beside it, on this machine.
    fetch: (input, init) => {
      const { dispatcher: _protection, ...rest } = (init ?? {}) as RequestInit & { dispatcher?: unknown };
      return globalThis.fetch(input, rest);
    },
    renderError: async (ctx: KoaContextWithOIDC, out: object) => {
      ctx.type = 'html';
      ctx.body = page('Sign-in error', `<pre>${escapeHtml(JSON.stringify(out, null, 2))}</pre>`);
    },
  };
  const provider = new Provider(issuer, configuration);
  for (const middleware of options.middleware ?? []) provider.use(middleware);
  const grants = new Map<string, number>();
  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    const type = String((ctx.oidc.params as Record<string, unknown> | undefined)?.grant_type ?? 'unknown');
    grants.set(type, (grants.get(type) ?? 0) + 1);
  });
  const backchannelLogouts: Array<{ clientId: string; error?: string }> = [];
  provider.on('backchannel.success', (_ctx: KoaContextWithOIDC, client: { clientId: string }) =>
    backchannelLogouts.push({ clientId: client.clientId }),
  );
  provider.on('backchannel.error', (_ctx: KoaContextWithOIDC, error: Error, client: { clientId: string }) =>
    backchannelLogouts.push({ clientId: client.clientId, error: error.message }),
  );
  const oidcCallback = provider.callback();

  async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', issuer);
    const [, , uid, action] = url.pathname.split('/');
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) return send(res, 400, page('Error', '<p>Unknown interaction.</p>'));
    const finishWithGrant = async (accountId: string) => {
      const params = details.params as Record<string, string>;
      const grant = details.grantId
        ? ((await provider.Grant.find(details.grantId)) ??
          new provider.Grant({ accountId, clientId: params.client_id! }))
        : new provider.Grant({ accountId, clientId: params.client_id! });
      grant.addOIDCScope(params.scope ?? 'openid');
      const grantId = await grant.save();
      logins.set(accountId, (logins.get(accountId) ?? 0) + 1);
      await provider.interactionFinished(
        req,
        res,
        { select_account: {}, login: { accountId }, consent: { grantId } },
        { mergeWithLastSubmission: false },
      );
    };
    if (req.method === 'GET' && action === undefined) {
      if (details.prompt.name === 'consent' && details.session?.accountId)
        return finishWithGrant(details.session.accountId);
      const form = `<form method="post" action="/interaction/${escapeHtml(details.uid)}/login">
<label>Username <input name="username" autocomplete="username" autofocus></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button></form>
<form method="post" action="/interaction/${escapeHtml(details.uid)}/abort"><button type="submit">Cancel</button></form>
<p><small>Development provider: user <code>demo</code>, password <code>demo</code>; or <code>reader</code>, <code>reader</code>.</small></p>`;
      return send(res, 200, page('Sign in', form));
    }
    if (req.method === 'POST' && action === 'login') {
      const body = await formBody(req);
      const username = body.get('username') ?? '';
      const user = users[username];
      if (user === undefined || user.password !== body.get('password')) {
        return send(
          res,
          401,
          page(
            'Sign in',
            `<p>Wrong username or password.</p><p><a href="/interaction/${escapeHtml(details.uid)}">Try again</a></p>`,
          ),
        );
      }
      return finishWithGrant(username);
    }
    if (req.method === 'POST' && action === 'abort') {
      return provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'The user cancelled the sign-in.' },
        { mergeWithLastSubmission: false },
      );
    }
    send(res, 404, page('Not found', ''));
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (options.intercept?.(req, res, issuer) === true) return;
    if ((req.url ?? '').startsWith('/interaction/')) {
      interaction(req, res).catch((error: unknown) => {
        if (!res.headersSent) send(res, 400, page('Sign-in error', `<p>${escapeHtml((error as Error).message)}</p>`));
      });
      return;
    }
    if (issuerPath !== '') {
      // Mounted under the issuer's path: oidc-provider reads the mount point from originalUrl.
      const url = req.url ?? '/';
      if (!url.startsWith(`${issuerPath}/`)) return send(res, 404, page('Not found', ''));
      (req as IncomingMessage & { originalUrl?: string }).originalUrl = url;
      req.url = url.slice(issuerPath.length);
    }
    void oidcCallback(req, res);
  });

  return {
    issuer,
    provider,
    logins,
    grants,
    backchannelLogouts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
