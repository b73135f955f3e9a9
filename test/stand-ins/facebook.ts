// A stand-in for Facebook Login and the Graph API of one version, over real
// HTTP, as Facebook documents them: /{v}/dialog/oauth (approves or denies),
// /{v}/oauth/access_token (code → short-lived token; fb_exchange_token →
// long-lived), /{v}/me (requires appsecret_proof when given a user token),
// /{v}/debug_token (app access token `id|secret`). Errors are Graph's
// {"error": {"message", "type", "code"}} with status 400.
import { createHmac } from 'node:crypto';

import { redirect, sendJson, startStandIn, token, type StandIn } from './http-kit.js';

export interface FacebookStandIn extends StandIn {
  readonly appId: string;
  readonly appSecret: string;
  readonly version: string;
  /** A user token of this app (or of another app), for client-directed tests. */
  issueToken(appId?: string): string;
  nextAuthorization: 'approve' | 'deny';
  /** Answers /me with this (any JSON, status 200) instead of the user's own profile, when set. */
  profileAnswer: unknown;
}

export const FACEBOOK_USER = { id: '10158000000000001', name: 'Fay Book', email: 'fay@facebook.example' };
const LONG_LIVED_SECONDS = 5_183_944;

function graphError(message: string, type: string, code: number) {
  return { error: { message, type, code, fbtrace_id: 'AbCdEf' } };
}

export async function startFacebook(options: { version?: string } = {}): Promise<FacebookStandIn> {
  const appId = '1234567890123456';
  const appSecret = 'fb-app-secret';
  const version = options.version ?? 'v19.0';
  const codes = new Map<string, string>(); // code → redirect_uri
  const tokens = new Map<string, { appId: string; longLived: boolean }>();
  const issueToken = (forApp = appId, longLived = false) => {
    const value = token('EAAB');
    tokens.set(value, { appId: forApp, longLived });
    return value;
  };
  const standIn: FacebookStandIn = Object.assign(
    await startStandIn((req, res, url) => {
      const q = url.searchParams;
      if (!url.pathname.startsWith(`/${version}/`))
        return sendJson(res, 400, graphError('Unknown path components', 'OAuthException', 2500));
      const path = url.pathname.slice(version.length + 1);
      if (path === '/dialog/oauth') {
        const back = new URL(q.get('redirect_uri') ?? '');
        if (q.get('client_id') !== appId)
          return sendJson(res, 400, graphError('Invalid App ID', 'OAuthException', 101));
        back.searchParams.set('state', q.get('state') ?? '');
        if (standIn.nextAuthorization === 'deny') {
          back.searchParams.set('error', 'access_denied');
          back.searchParams.set('error_code', '200');
          back.searchParams.set('error_reason', 'user_denied');
          back.searchParams.set('error_description', 'Permissions error');
          return redirect(res, back.href);
        }
        const code = token('AQ');
        codes.set(code, q.get('redirect_uri') ?? '');
        back.searchParams.set('code', code);
        return redirect(res, back.href);
      }
      if (path === '/oauth/access_token') {
        if (q.get('client_id') !== appId || q.get('client_secret') !== appSecret)
          return sendJson(res, 400, graphError('Error validating client secret.', 'OAuthException', 1));
        if (q.get('grant_type') === 'fb_exchange_token') {
          const short = tokens.get(q.get('fb_exchange_token') ?? '');
          if (short === undefined)
            return sendJson(res, 400, graphError('Invalid OAuth access token.', 'OAuthException', 190));
          return sendJson(res, 200, {
            access_token: issueToken(appId, true),
            token_type: 'bearer',
            expires_in: LONG_LIVED_SECONDS,
          });
        }
        const redirectUri = codes.get(q.get('code') ?? '');
        codes.delete(q.get('code') ?? '');
        if (redirectUri === undefined)
          return sendJson(res, 400, graphError('Invalid verification code format.', 'OAuthException', 100));
        if (redirectUri !== q.get('redirect_uri'))
          return sendJson(
            res,
            400,
            graphError(
              'Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request',
              'OAuthException',
              100,
            ),
          );
        return sendJson(res, 200, { access_token: issueToken(), token_type: 'bearer', expires_in: 5400 });
      }
      if (path === '/me') {
        const accessToken = q.get('access_token') ?? '';
        const grant = tokens.get(accessToken);
        if (grant === undefined)
          return sendJson(
            res,
            400,
            graphError('Invalid OAuth access token - Cannot parse access token', 'OAuthException', 190),
          );
        const proof = createHmac('sha256', appSecret).update(accessToken).digest('hex');
        if (q.get('appsecret_proof') !== proof || grant.appId !== appId)
          return sendJson(
            res,
            400,
            graphError('Invalid appsecret_proof provided in the API argument', 'GraphMethodException', 100),
          );
        if (standIn.profileAnswer !== undefined) return sendJson(res, 200, standIn.profileAnswer);
        const fields = (q.get('fields') ?? 'id,name').split(',');
        return sendJson(
          res,
          200,
          Object.fromEntries(
            fields.filter((f) => f in FACEBOOK_USER).map((f) => [f, FACEBOOK_USER[f as keyof typeof FACEBOOK_USER]]),
          ),
        );
      }
      if (path === '/debug_token') {
        if (q.get('access_token') !== `${appId}|${appSecret}`)
          return sendJson(res, 400, graphError('Invalid OAuth access token signature.', 'OAuthException', 190));
        const grant = tokens.get(q.get('input_token') ?? '');
        if (grant === undefined)
          return sendJson(res, 200, {
            data: { is_valid: false, error: { code: 190, message: 'Invalid OAuth access token.' } },
          });
        return sendJson(res, 200, {
          data: {
            app_id: grant.appId,
            type: 'USER',
            application: 'gatehouse test',
            expires_at: Math.floor(Date.now() / 1000) + 3600,
            is_valid: true,
            scopes: ['public_profile', 'email'],
            user_id: FACEBOOK_USER.id,
          },
        });
      }
      sendJson(res, 400, graphError('Unsupported get request.', 'GraphMethodException', 100));
    }),
    {
      appId,
      appSecret,
      version,
      issueToken,
      nextAuthorization: 'approve' as 'approve' | 'deny',
      profileAnswer: undefined as unknown,
    },
  );
  return standIn;
}

/** The identityProviders block that points gatehouse at this stand-in. */
export function facebookDocument(facebook: FacebookStandIn): Record<string, unknown> {
  return {
    identityProviders: {
      facebook: {
        registration: { appId: facebook.appId, appSecretSettingName: 'FACEBOOK_SECRET' },
        graphApiVersion: facebook.version,
        endpoints: { authorization: facebook.url, graph: facebook.url },
      },
    },
  };
}
