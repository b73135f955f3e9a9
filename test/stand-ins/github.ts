// A stand-in for GitHub's OAuth web flow and REST API, over real HTTP, as
// GitHub documents them: /login/oauth/authorize (approves at once, or denies),
// /login/oauth/access_token (form answer unless Accept: application/json;
// errors as 200 {"error": ...}; PKCE S256), and under /api/v3 (the GitHub
// Enterprise Server layout): /user, /user/emails, POST /applications/{id}/token,
// and the user's organisations (/user/orgs) and teams (/user/teams), paged by
// `per_page` (default 30, at most 100) and `page` with a Link header as GitHub
// pages: without the read:org scope, /user/orgs lists public memberships only
// and /user/teams answers 403.
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';

import { redirect, sendJson, startStandIn, token, type StandIn } from './http-kit.js';

export interface GitHubUser {
  readonly id: number;
  readonly login: string;
  readonly name: string | null;
  /** The public profile address (null when private). */
  readonly email: string | null;
  readonly emails: ReadonlyArray<{ email: string; primary: boolean; verified: boolean; visibility: string | null }>;
  /** Organisations the user is a member of; `public`: the membership is public. */
  readonly organisations?: ReadonlyArray<{ login: string; public: boolean }>;
  /** Teams, by their organisation's login and the team's slug. */
  readonly teams?: ReadonlyArray<{ organisation: string; slug: string; name: string }>;
}

export interface GitHubStandIn extends StandIn {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Tokens issued, to hand one to a client-directed test. */
  issueToken(scopes?: string[]): string;
  /** What the next authorization does: approve (default) or deny. */
  nextAuthorization: 'approve' | 'deny';
  /** `broken`: the token endpoint answers an HTML error page, as a proxy in trouble would. */
  tokenEndpoint: 'working' | 'broken';
  /** Answers /user and /user/emails with these (any JSON, status 200) instead of the user's own, when set. */
  profileAnswers: { user?: unknown; emails?: unknown } | undefined;
}

export const OCTOCAT: GitHubUser = {
  id: 583231,
  login: 'octocat',
  name: 'The Octocat',
  email: null,
  emails: [
    { email: 'octocat@old.example', primary: false, verified: true, visibility: null },
    { email: 'octocat@github.example', primary: true, verified: true, visibility: 'private' },
  ],
};

export async function startGitHub(
  options: { user?: GitHubUser; clientId?: string; clientSecret?: string } = {},
): Promise<GitHubStandIn> {
  const user = options.user ?? OCTOCAT;
  const clientId = options.clientId ?? 'Iv1.8a61f9b3a7aba766';
  const clientSecret = options.clientSecret ?? 'gh-secret-1';
  const codes = new Map<string, { redirectUri: string; challenge: string | null; scopes: string[] }>();
  const tokens = new Map<string, { scopes: string[] }>();
  const issueToken = (scopes = ['read:user', 'user:email']) => {
    const value = token('gho_');
    tokens.set(value, { scopes });
    return value;
  };

  const standIn: GitHubStandIn = Object.assign(
    await startStandIn((req, res, url, body) => {
      const api = url.pathname.startsWith('/api/v3/');
      const path = api ? url.pathname.slice('/api/v3'.length) : url.pathname;
      if (!api && req.method === 'GET' && path === '/login/oauth/authorize') {
        const redirectUri = url.searchParams.get('redirect_uri') ?? '';
        if (url.searchParams.get('client_id') !== clientId || !/^https?:\/\//.test(redirectUri))
          return sendJson(res, 404, { message: 'Not Found' });
        const back = new URL(redirectUri);
        back.searchParams.set('state', url.searchParams.get('state') ?? '');
        if (standIn.nextAuthorization === 'deny') {
          back.searchParams.set('error', 'access_denied');
          back.searchParams.set('error_description', 'The user has denied your application access.');
          return redirect(res, back.href);
        }
        const code = token('');
        codes.set(code, {
          redirectUri,
          challenge: url.searchParams.get('code_challenge'),
          scopes: (url.searchParams.get('scope') ?? '').split(/[ ,]/).filter(Boolean),
        });
        back.searchParams.set('code', code);
        return redirect(res, back.href);
      }
      if (!api && req.method === 'POST' && path === '/login/oauth/access_token') {
        if (standIn.tokenEndpoint === 'broken')
          return res
            .writeHead(503, { 'content-type': 'text/html' })
            .end('<html><body>Service Unavailable</body></html>');
        const form = new URLSearchParams(body);
        const answer = (fields: Record<string, string>) =>
          (req.headers.accept ?? '').includes('application/json')
            ? sendJson(res, 200, fields)
            : res
                .writeHead(200, { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' })
                .end(new URLSearchParams(fields).toString());
        if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret)
          return answer({
            error: 'incorrect_client_credentials',
            error_description: 'The client_id and/or client_secret passed are incorrect.',
          });
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        if (grant === undefined)
          return answer({
            error: 'bad_verification_code',
            error_description: 'The code passed is incorrect or expired.',
          });
        if (form.get('redirect_uri') !== null && form.get('redirect_uri') !== grant.redirectUri)
          return answer({
            error: 'redirect_uri_mismatch',
            error_description: 'The redirect_uri MUST match the registered callback URL for this application.',
          });
        if (
          grant.challenge !== null &&
          createHash('sha256')
            .update(form.get('code_verifier') ?? '')
            .digest('base64url') !== grant.challenge
        ) {
          return answer({
            error: 'invalid_grant',
            error_description: 'The code_verifier does not match the code_challenge.',
          });
        }
        return answer({ access_token: issueToken(grant.scopes), scope: grant.scopes.join(','), token_type: 'bearer' });
      }
      if (api) {
        if (!req.headers['user-agent'])
          return sendJson(res, 403, {
            message:
              'Request forbidden by administrative rules. Please make sure your request has a User-Agent header.',
          });
        if (req.method === 'POST' && path === `/applications/${clientId}/token`) {
          const basic = Buffer.from(`${clientId}:${clientSecret}`).toString('base64');
          if (req.headers.authorization !== `Basic ${basic}`) return sendJson(res, 404, { message: 'Not Found' });
          const accessToken = (JSON.parse(body || '{}') as { access_token?: string }).access_token ?? '';
          if (!tokens.has(accessToken)) return sendJson(res, 404, { message: 'Not Found' });
          return sendJson(res, 200, {
            id: 1,
            token: accessToken,
            app: { client_id: clientId, name: 'gatehouse test' },
            scopes: tokens.get(accessToken)!.scopes,
            user: { login: user.login, id: user.id },
          });
        }
        const bearer = /^(?:Bearer|token) (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        const grant = bearer === undefined ? undefined : tokens.get(bearer);
        if (grant === undefined)
          return sendJson(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
        const override = standIn.profileAnswers;
        if (req.method === 'GET' && path === '/user' && override?.user !== undefined)
          return sendJson(res, 200, override.user);
        if (req.method === 'GET' && path === '/user/emails' && override?.emails !== undefined)
          return sendJson(res, 200, override.emails);
        if (req.method === 'GET' && path === '/user')
          return sendJson(res, 200, {
            login: user.login,
            id: user.id,
            node_id: 'MDQ6VXNlcjE=',
            name: user.name,
            email: user.email,
            type: 'User',
          });
        if (req.method === 'GET' && (path === '/user/orgs' || path === '/user/teams')) {
          const readOrg = grant.scopes.some((scope) => ['read:org', 'write:org', 'admin:org'].includes(scope));
          if (path === '/user/teams' && !readOrg)
            return sendJson(res, 403, {
              message: 'Resource not accessible by integration',
              documentation_url: 'https://docs.github.com/rest/teams/teams#list-teams-for-the-authenticated-user',
            });
          const items =
            path === '/user/orgs'
              ? (user.organisations ?? [])
                  .filter((organisation) => readOrg || organisation.public)
                  .map((organisation, i) => ({ login: organisation.login, id: 1000 + i, description: null }))
              : (user.teams ?? []).map((team, i) => ({
                  id: 2000 + i,
                  name: team.name,
                  slug: team.slug,
                  organization: { login: team.organisation, id: 3000 + i },
                }));
          return sendPage(res, url, items);
        }
        if (req.method === 'GET' && path === '/user/emails') {
          if (!grant.scopes.includes('user:email') && !grant.scopes.includes('user'))
            return sendJson(res, 404, { message: 'Not Found' });
          return sendJson(res, 200, user.emails);
        }
      }
      sendJson(res, 404, { message: 'Not Found' });
    }),
    {
      clientId,
      clientSecret,
      issueToken,
      nextAuthorization: 'approve' as 'approve' | 'deny',
      tokenEndpoint: 'working' as 'working' | 'broken',
      profileAnswers: undefined,
    },
  );
  return standIn;
}

/** One page of a list as GitHub pages it: `per_page` (default 30, at most 100), `page` from 1, a Link header to the next and last. */
function sendPage(res: ServerResponse, url: URL, items: readonly unknown[]): void {
  const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? '30') || 30));
  const page = Math.max(1, Number(url.searchParams.get('page') ?? '1') || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const link = (n: number, rel: string) => {
    const target = new URL(url.href);
    target.searchParams.set('page', String(n));
    return `<${target.href}>; rel="${rel}"`;
  };
  const links = page < last ? [link(page + 1, 'next'), link(last, 'last')] : [];
  sendJson(
    res,
    200,
    items.slice((page - 1) * perPage, page * perPage),
    links.length > 0 ? { link: links.join(', ') } : {},
  );
}

/** The identityProviders block that points gatehouse at this stand-in. */
export function gitHubDocument(github: GitHubStandIn): Record<string, unknown> {
  return {
    identityProviders: {
      gitHub: {
        registration: { clientId: github.clientId, clientSecretSettingName: 'GITHUB_SECRET' },
        endpoints: { web: github.url, api: `${github.url}/api/v3` },
      },
    },
  };
}
