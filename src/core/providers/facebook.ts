// The social-network provider (Facebook): OAuth 2.0 through the Graph API of
// the configured version. The code's short-lived token is swapped for a
// long-lived one; every Graph call carries appsecret_proof. No refresh
// tokens: a long-lived token lasts about 60 days, then the user signs in again.
import { createHmac } from 'node:crypto';

import type { FacebookProviderConfig } from '../config/provider-settings.js';
import type { Claim } from '../identity.js';
import { authorizationCode } from './authorization-callback.js';
import { ConfiguredProvider } from './configured-provider.js';
import { ProviderRefusedError } from './errors.js';
import type { LoginBegun, LoginCallback, LoginStart, Provider, SignIn, TokenExchange } from './provider.js';
import {
  callProvider,
  decimalIdField,
  expiryAfter,
  expiryAt,
  jsonAnswer,
  optionalText,
  stringField,
} from './provider-http.js';

export class FacebookProvider extends ConfiguredProvider<FacebookProviderConfig> implements Provider {
  readonly responseMode = 'query' as const;

  constructor(
    config: FacebookProviderConfig,
    private readonly now: () => number = Date.now,
  ) {
    super(config);
  }

  #graph(path: string, query: Record<string, string>): string {
    return `${this.config.graphOrigin}/${this.config.graphApiVersion}${path}?${new URLSearchParams(query).toString()}`;
  }

  /** HMAC-SHA256 of the token keyed with the app secret: Graph refuses a stolen token used without it. */
  #proof(accessToken: string): string {
    return createHmac('sha256', this.config.appSecret).update(accessToken).digest('hex');
  }

  async begin(start: LoginStart): Promise<LoginBegun> {
    const url = new URL(`${this.config.dialogOrigin}/${this.config.graphApiVersion}/dialog/oauth`);
    url.search = new URLSearchParams({
      client_id: this.config.appId,
      redirect_uri: start.redirectUri,
      state: start.state,
      response_type: 'code',
      scope: this.config.scopes.join(','),
      // Facebook asks for the password again, and offers "Not you?" there.
      ...(start.prompt !== undefined ? { auth_type: 'reauthenticate' } : {}),
    }).toString();
    return { url };
  }

  async complete(callback: LoginCallback): Promise<SignIn> {
    const code = authorizationCode(callback);
    const short = jsonAnswer(
      await callProvider(
        this.#graph('/oauth/access_token', {
          client_id: this.config.appId,
          client_secret: this.config.appSecret,
          redirect_uri: callback.redirectUri,
          code,
        }),
        {},
        'code redemption',
      ),
      'code redemption',
    );
    return this.#signIn(await this.#longLived(stringField(short, 'access_token', 'code redemption')));
  }

  /** A user token the client got from Facebook: Graph's debug_token must say it is valid and this app's. */
  async exchange(request: TokenExchange): Promise<SignIn> {
    const token = request.accessToken;
    if (token === undefined) throw new ProviderRefusedError('token exchange: expected access_token', 'invalid_request');
    const debug = jsonAnswer(
      await callProvider(
        this.#graph('/debug_token', {
          input_token: token,
          access_token: `${this.config.appId}|${this.config.appSecret}`,
        }),
        {},
        'token check',
      ),
      'token check',
    );
    const data = (typeof debug.data === 'object' && debug.data !== null ? debug.data : {}) as Record<string, unknown>;
    if (data.is_valid !== true || String(data.app_id ?? '') !== this.config.appId)
      throw new ProviderRefusedError('token exchange: not a valid token of this app', 'invalid_token');
    const expires = Number(data.expires_at);
    return this.#signIn({
      accessToken: token,
      ...(Number.isFinite(expires) && expires > 0 ? { expiresAt: expiryAt(expires, this.now()) } : {}),
    });
  }

  async #longLived(shortLived: string): Promise<{ accessToken: string; expiresAt?: number }> {
    const answer = jsonAnswer(
      await callProvider(
        this.#graph('/oauth/access_token', {
          grant_type: 'fb_exchange_token',
          client_id: this.config.appId,
          client_secret: this.config.appSecret,
          fb_exchange_token: shortLived,
        }),
        {},
        'long-lived token',
      ),
      'long-lived token',
    );
    const expires = expiryAfter(answer.expires_in, this.now());
    return {
      accessToken: stringField(answer, 'access_token', 'long-lived token'),
      ...(expires !== undefined ? { expiresAt: expires } : {}),
    };
  }

  async #signIn(token: { accessToken: string; expiresAt?: number }): Promise<SignIn> {
    const profile = jsonAnswer(
      await callProvider(
        this.#graph('/me', {
          fields: 'id,name,email',
          access_token: token.accessToken,
          appsecret_proof: this.#proof(token.accessToken),
        }),
        {},
        'profile',
      ),
      'profile',
    );
    // Graph writes user ids as strings of digits (app-scoped ids).
    const id = decimalIdField(profile, 'id', 'profile');
    const name = optionalText(profile, 'name');
    const email = optionalText(profile, 'email');
    const claims: Claim[] = [
      { typ: 'id', val: id },
      ...(name !== undefined ? [{ typ: 'name', val: name }] : []),
      ...(email !== undefined ? [{ typ: 'email', val: email }] : []),
    ];
    return {
      userId: id,
      userName: name ?? email ?? id,
      nameType: name !== undefined ? 'name' : email !== undefined ? 'email' : 'id',
      roleType: 'roles',
      claims,
      tokens: {
        accessToken: token.accessToken,
        ...(token.expiresAt !== undefined ? { accessTokenExpiresAt: token.expiresAt } : {}),
      },
    };
  }
}
