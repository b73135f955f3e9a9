// A stand-in for Twitter's OAuth 1.0a sign-in and verify_credentials, over
// real HTTP, as Twitter documents them. Every request's HMAC-SHA1 signature
// is checked here with oauth-1.0a (consumer secret, and the token secret of
// the token it names); timestamps must be fresh and nonces unused.
import { createHmac } from 'node:crypto';

import OAuth from 'oauth-1.0a';

import { redirect, sendJson, sendText, startStandIn, token, type StandIn } from './http-kit.js';

export interface TwitterStandIn extends StandIn {
  readonly consumerKey: string;
  readonly consumerSecret: string;
  /** An access token pair of this consumer, for client-directed tests. */
  issueAccessToken(): { token: string; secret: string };
  nextAuthorization: 'approve' | 'deny';
  /** Answers verify_credentials with this (any JSON, status 200) instead of the user's own profile, when set. */
  profileAnswer: unknown;
}

export const TWITTER_USER = {
  id: 783214,
  id_str: '783214',
  name: 'Twitter API',
  screen_name: 'twitterapi',
  email: 'api@twitter.example',
};

/** The parameters of an `Authorization: OAuth ...` header, decoded. */
export function parseOAuthHeader(header: string | undefined): Record<string, string> | undefined {
  if (header === undefined || !header.startsWith('OAuth ')) return undefined;
  const out: Record<string, string> = {};
  for (const match of header.slice(6).matchAll(/([A-Za-z0-9_]+)="([^"]*)"/g))
    out[match[1]!] = decodeURIComponent(match[2]!);
  return out;
}

export async function startTwitter(): Promise<TwitterStandIn> {
  const consumerKey = 'xvz1evFS4wEEPTGEFPHBog';
  const consumerSecret = 'tw-consumer-secret';
  const oauth = new OAuth({
    consumer: { key: consumerKey, secret: consumerSecret },
    signature_method: 'HMAC-SHA1',
    hash_function: (base, key) => createHmac('sha1', key).update(base).digest('base64'),
  });
  const requestTokens = new Map<string, { secret: string; callback: string; verifier?: string }>();
  const accessTokens = new Map<string, string>(); // token → secret
  const nonces = new Set<string>();
  const issueAccessToken = () => {
    const pair = { token: `${TWITTER_USER.id}-${token('')}`, secret: token('') };
    accessTokens.set(pair.token, pair.secret);
    return pair;
  };

  /** The token the request was signed with, or an error text. */
  function verify(
    method: string,
    fullUrl: string,
    header: string | undefined,
    body: string,
    secretOf: (token: string) => string | undefined,
  ): { token?: string; params: Record<string, string> } | string {
    const params = parseOAuthHeader(header);
    if (params === undefined) return 'no OAuth header';
    if (params.oauth_consumer_key !== consumerKey || params.oauth_signature_method !== 'HMAC-SHA1')
      return 'bad consumer';
    if (Math.abs(Number(params.oauth_timestamp) - Date.now() / 1000) > 300) return 'stale timestamp';
    if (!params.oauth_nonce || nonces.has(params.oauth_nonce)) return 'replayed nonce';
    const tokenSecret = params.oauth_token === undefined ? '' : secretOf(params.oauth_token);
    if (tokenSecret === undefined) return 'unknown token';
    const { oauth_signature: signature, ...signed } = params;
    const expected = oauth.getSignature(
      { url: fullUrl, method, data: Object.fromEntries(new URLSearchParams(body)) },
      tokenSecret,
      signed as unknown as OAuth.Data,
    );
    if (signature !== expected) return 'bad signature';
    nonces.add(params.oauth_nonce);
    return { ...(params.oauth_token !== undefined ? { token: params.oauth_token } : {}), params };
  }

  const standIn: TwitterStandIn = Object.assign(
    await startStandIn((req, res, url, body) => {
      // What the client signed: its own view of this URL (host included).
      const fullUrl = `http://${req.headers.host}${url.pathname}${url.search}`;
      const unauthorized = (why: string) =>
        sendJson(res, 401, { errors: [{ code: 32, message: `Could not authenticate you. (${why})` }] });
      if (req.method === 'POST' && url.pathname === '/oauth/request_token') {
        const checked = verify('POST', fullUrl, req.headers.authorization, body, () => undefined);
        if (typeof checked === 'string') return unauthorized(checked);
        const callback = checked.params.oauth_callback;
        if (!callback) return unauthorized('no oauth_callback');
        const requestToken = token('rt-');
        requestTokens.set(requestToken, { secret: token(''), callback });
        return sendText(
          res,
          200,
          new URLSearchParams({
            oauth_token: requestToken,
            oauth_token_secret: requestTokens.get(requestToken)!.secret,
            oauth_callback_confirmed: 'true',
          }).toString(),
          'text/html; charset=utf-8',
        );
      }
      if (req.method === 'GET' && url.pathname === '/oauth/authenticate') {
        const requestToken = url.searchParams.get('oauth_token') ?? '';
        const pending = requestTokens.get(requestToken);
        if (pending === undefined) return sendText(res, 401, 'This page is no longer valid.');
        const back = new URL(pending.callback);
        if (standIn.nextAuthorization === 'deny') {
          back.searchParams.set('denied', requestToken);
          return redirect(res, back.href);
        }
        pending.verifier = token('v-');
        back.searchParams.set('oauth_token', requestToken);
        back.searchParams.set('oauth_verifier', pending.verifier);
        return redirect(res, back.href);
      }
      if (req.method === 'POST' && url.pathname === '/oauth/access_token') {
        const checked = verify('POST', fullUrl, req.headers.authorization, body, (t) => requestTokens.get(t)?.secret);
        if (typeof checked === 'string') return unauthorized(checked);
        const pending = requestTokens.get(checked.token ?? '');
        const verifier =
          checked.params.oauth_verifier ??
          new URLSearchParams(body).get('oauth_verifier') ??
          url.searchParams.get('oauth_verifier');
        if (pending === undefined || pending.verifier === undefined || verifier !== pending.verifier)
          return unauthorized('bad verifier');
        requestTokens.delete(checked.token!);
        const pair = issueAccessToken();
        return sendText(
          res,
          200,
          new URLSearchParams({
            oauth_token: pair.token,
            oauth_token_secret: pair.secret,
            user_id: TWITTER_USER.id_str,
            screen_name: TWITTER_USER.screen_name,
          }).toString(),
          'text/html; charset=utf-8',
        );
      }
      if (req.method === 'GET' && url.pathname === '/1.1/account/verify_credentials.json') {
        const checked = verify('GET', fullUrl, req.headers.authorization, body, (t) => accessTokens.get(t));
        if (typeof checked === 'string') return unauthorized(checked);
        if (standIn.profileAnswer !== undefined) return sendJson(res, 200, standIn.profileAnswer);
        const withEmail = url.searchParams.get('include_email') === 'true';
        const { email, ...profile } = TWITTER_USER;
        return sendJson(res, 200, withEmail ? { ...profile, email } : profile);
      }
      sendJson(res, 404, { errors: [{ code: 34, message: 'Sorry, that page does not exist.' }] });
    }),
    {
      consumerKey,
      consumerSecret,
      issueAccessToken,
      nextAuthorization: 'approve' as 'approve' | 'deny',
      profileAnswer: undefined as unknown,
    },
  );
  return standIn;
}

/** The identityProviders block that points gatehouse at this stand-in. */
export function twitterDocument(twitter: TwitterStandIn): Record<string, unknown> {
  return {
    identityProviders: {
      twitter: {
        registration: { consumerKey: twitter.consumerKey, consumerSecretSettingName: 'TWITTER_SECRET' },
        endpoints: { api: twitter.url },
      },
    },
  };
}
