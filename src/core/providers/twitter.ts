// The microblogging provider (Twitter/X): OAuth 1.0a, every request signed
// with HMAC-SHA1 by oauth-1.0a. Request token → the user authorizes →
// access token with the oauth_verifier; the request-token secret travels
// sealed in the login-transaction cookie. The app may receive the access
// token and its secret as headers. No refresh: OAuth 1.0a tokens do not expire.
import { createHmac } from 'node:crypto';

import OAuth from 'oauth-1.0a';

import type { TwitterProviderConfig } from '../config/provider-settings.js';
import { constantTimeEqual } from '../crypto/equal.js';
import type { Claim } from '../identity.js';
import { ConfiguredProvider } from './configured-provider.js';
import { ProviderRefusedError, ProviderUnavailableError } from './errors.js';
import type { LoginBegun, LoginCallback, LoginStart, Provider, SignIn, TokenExchange } from './provider.js';
import {
  callProvider,
  decimalIdField,
  jsonAnswer,
  optionalText,
  stringField,
  type ProviderAnswer,
} from './provider-http.js';

/** An OAuth 1.0a signer for one consumer (exported for the signature test against Twitter's published example). */
export function oauthSigner(consumerKey: string, consumerSecret: string): OAuth {
  return new OAuth({
    consumer: { key: consumerKey, secret: consumerSecret },
    signature_method: 'HMAC-SHA1',
    hash_function: (base, key) => createHmac('sha1', key).update(base).digest('base64'),
  });
}

export class TwitterProvider extends ConfiguredProvider<TwitterProviderConfig> implements Provider {
  readonly responseMode = 'query' as const;
  readonly #oauth: OAuth;

  constructor(config: TwitterProviderConfig) {
    super(config);
    this.#oauth = oauthSigner(config.consumerKey, config.consumerSecret);
  }

  /** A signed request; `oauth` holds protocol parameters (oauth_callback, oauth_verifier) that go in the header. */
  async #signed(
    method: 'GET' | 'POST',
    url: string,
    token: OAuth.Token | undefined,
    oauth: Record<string, string>,
    during: string,
  ): Promise<ProviderAnswer> {
    const authorized = this.#oauth.authorize({ url, method, data: oauth }, token);
    const header = this.#oauth.toHeader({ ...authorized, ...oauth });
    return callProvider(url, { method, headers: { ...header, accept: 'application/json' } }, during);
  }

  /** A form-encoded token answer (request_token, access_token); 401 means the credentials were refused. */
  #formAnswer(answer: ProviderAnswer, during: string): URLSearchParams {
    if (answer.status === 401 || answer.status === 403)
      throw new ProviderRefusedError(`${during}: provider answered ${answer.status}`, 'access_denied');
    if (answer.status !== 200) throw new ProviderUnavailableError(`${during}: provider answered ${answer.status}`);
    return new URLSearchParams(answer.text);
  }

  async begin(start: LoginStart): Promise<LoginBegun> {
    const answer = this.#formAnswer(
      await this.#signed(
        'POST',
        `${this.config.apiOrigin}/oauth/request_token`,
        undefined,
        { oauth_callback: start.redirectUri },
        'request token',
      ),
      'request token',
    );
    const token = answer.get('oauth_token');
    const secret = answer.get('oauth_token_secret');
    if (!token || !secret || answer.get('oauth_callback_confirmed') !== 'true')
      throw new ProviderUnavailableError('request token: incomplete answer');
    const url = new URL(`${this.config.apiOrigin}/oauth/authenticate`);
    url.searchParams.set('oauth_token', token);
    // Twitter's sign-in form instead of the signed-in account's "Authorize app".
    if (start.prompt !== undefined) url.searchParams.set('force_login', 'true');
    return { url, saved: { requestToken: token, requestTokenSecret: secret }, correlation: token };
  }

  /** The request token plays the part of OAuth 2.0's state: `oauth_token` when authorized, `denied` when not. */
  callbackCorrelation(params: URLSearchParams): string | undefined {
    return params.get('oauth_token') || params.get('denied') || undefined;
  }

  async complete(callback: LoginCallback): Promise<SignIn> {
    const { params, saved } = callback;
    if (params.get('denied') !== null)
      throw new ProviderRefusedError('callback: the user denied access', 'access_denied');
    const requestToken = saved.requestToken ?? '';
    // The request token plays the part of OAuth 2.0's state.
    if (requestToken === '' || !constantTimeEqual(params.get('oauth_token') ?? '', requestToken))
      throw new ProviderRefusedError('callback: request token mismatch', 'invalid_state');
    const verifier = params.get('oauth_verifier');
    if (verifier === null || verifier === '')
      throw new ProviderRefusedError('callback: no oauth_verifier', 'invalid_request');
    const answer = this.#formAnswer(
      await this.#signed(
        'POST',
        `${this.config.apiOrigin}/oauth/access_token`,
        { key: requestToken, secret: saved.requestTokenSecret ?? '' },
        { oauth_verifier: verifier },
        'access token',
      ),
      'access token',
    );
    const accessToken = answer.get('oauth_token');
    const accessTokenSecret = answer.get('oauth_token_secret');
    if (!accessToken || !accessTokenSecret) throw new ProviderUnavailableError('access token: incomplete answer');
    return this.#signIn(accessToken, accessTokenSecret);
  }

  /** A token pair the client got itself: verify_credentials, signed with it, tells whether it is good for this consumer. */
  async exchange(request: TokenExchange): Promise<SignIn> {
    if (request.accessToken === undefined || request.accessTokenSecret === undefined) {
      throw new ProviderRefusedError(
        'token exchange: expected access_token and access_token_secret',
        'invalid_request',
      );
    }
    return this.#signIn(request.accessToken, request.accessTokenSecret);
  }

  async #signIn(accessToken: string, accessTokenSecret: string): Promise<SignIn> {
    const url = `${this.config.apiOrigin}/1.1/account/verify_credentials.json?include_email=true&skip_status=true`;
    const authorized = this.#oauth.authorize({ url, method: 'GET' }, { key: accessToken, secret: accessTokenSecret });
    const answer = await callProvider(
      url,
      { headers: { ...this.#oauth.toHeader(authorized), accept: 'application/json' } },
      'profile',
    );
    if (answer.status === 401) throw new ProviderRefusedError('profile: credentials refused', 'invalid_token');
    const user = jsonAnswer(answer, 'profile');
    // `id_str`: the id as a string of digits (the number `id` loses digits in JavaScript).
    const id = decimalIdField(user, 'id_str', 'profile');
    const screenName = stringField(user, 'screen_name', 'profile');
    const name = optionalText(user, 'name');
    const email = optionalText(user, 'email');
    const claims: Claim[] = [
      { typ: 'id', val: id },
      { typ: 'screen_name', val: screenName },
      ...(name !== undefined ? [{ typ: 'name', val: name }] : []),
      ...(email !== undefined ? [{ typ: 'email', val: email }] : []),
    ];
    return {
      userId: id,
      userName: screenName,
      nameType: 'screen_name',
      roleType: 'roles',
      claims,
      tokens: { accessToken, accessTokenSecret },
    };
  }
}
