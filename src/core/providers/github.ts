// The code-hosting provider (GitHub, or GitHub Enterprise Server): OAuth 2.0
// web flow with PKCE. The token endpoint answers JSON only when asked with
// `Accept: application/json` (and reports errors with status 200); the user
// comes from /user, the primary verified address from /user/emails. No
// refresh tokens (OAuth-app tokens do not expire). When a rule allows by group,
// the user's organisations (/user/orgs) and teams (/user/teams) are the groups,
// read at sign-in with the read:org scope.
import * as oidc from 'openid-client';

import type { AccessFacts } from '../authorization/access-facts.js';
import { asciiLowerCase } from '../authorization/email-domain.js';
import type { GitHubProviderConfig } from '../config/provider-settings.js';
import type { Claim } from '../identity.js';
import { authorizationCode } from './authorization-callback.js';
import { ConfiguredProvider } from './configured-provider.js';
import { ProviderRefusedError, ProviderUnavailableError } from './errors.js';
import { refusalWithCode } from './oauth-error-code.js';
import type { LoginBegun, LoginCallback, LoginStart, Provider, SignIn, TokenExchange } from './provider.js';
import { callProvider, jsonAnswer, optionalText, stringField } from './provider-http.js';

const API_VERSION = '2022-11-28';
/** GitHub's largest page; and how many pages of organisations or teams are read before the rest is taken as unknown. */
const PAGE_SIZE = 100;
const MAX_PAGES = 10;
const USER_AGENT = 'gatehouse';

export class GitHubProvider extends ConfiguredProvider<GitHubProviderConfig> implements Provider {
  readonly responseMode = 'query' as const;

  async begin(start: LoginStart): Promise<LoginBegun> {
    const url = new URL(`${this.config.webOrigin}/login/oauth/authorize`);
    url.search = new URLSearchParams({
      client_id: this.config.clientId,
      redirect_uri: start.redirectUri,
      scope: this.config.scopes.join(' '),
      state: start.state,
      code_challenge: await oidc.calculatePKCECodeChallenge(start.codeVerifier),
      code_challenge_method: 'S256',
      // GitHub's one account prompt is its account picker, where another account can be added.
      ...(start.prompt !== undefined ? { prompt: 'select_account' } : {}),
    }).toString();
    return { url };
  }

  async complete(callback: LoginCallback): Promise<SignIn> {
    const code = authorizationCode(callback);
    const answer = await callProvider(
      `${this.config.webOrigin}/login/oauth/access_token`,
      {
        method: 'POST',
        headers: {
          accept: 'application/json',
          'content-type': 'application/x-www-form-urlencoded',
          'user-agent': USER_AGENT,
        },
        body: new URLSearchParams({
          client_id: this.config.clientId,
          client_secret: this.config.clientSecret,
          code,
          redirect_uri: callback.redirectUri,
          code_verifier: callback.codeVerifier,
        }).toString(),
      },
      'code redemption',
    );
    const body = jsonAnswer(answer, 'code redemption');
    // GitHub reports a bad code as 200 {"error": "bad_verification_code"}.
    if (body.error !== undefined) throw refusalWithCode('code redemption: provider answered', body.error);
    const accessToken = stringField(body, 'access_token', 'code redemption');
    return this.#signIn(accessToken);
  }

  /** A token the client got from GitHub: it must belong to this OAuth app (GitHub's token check), then the user is read. */
  async exchange(request: TokenExchange): Promise<SignIn> {
    const token = request.accessToken;
    if (token === undefined) throw new ProviderRefusedError('token exchange: expected access_token', 'invalid_request');
    const basic = Buffer.from(
      `${encodeURIComponent(this.config.clientId)}:${encodeURIComponent(this.config.clientSecret)}`,
    ).toString('base64');
    const answer = await callProvider(
      `${this.config.apiBase}/applications/${encodeURIComponent(this.config.clientId)}/token`,
      {
        method: 'POST',
        headers: { ...this.#apiHeaders(), authorization: `Basic ${basic}`, 'content-type': 'application/json' },
        body: JSON.stringify({ access_token: token }),
      },
      'token check',
    );
    // 404: not a token of this app (or not a token at all).
    if (answer.status === 404 || answer.status === 422)
      throw new ProviderRefusedError('token exchange: not a token of this application', 'invalid_token');
    jsonAnswer(answer, 'token check');
    return this.#signIn(token);
  }

  #apiHeaders(token?: string): Record<string, string> {
    return {
      accept: 'application/vnd.github+json',
      'x-github-api-version': API_VERSION,
      'user-agent': USER_AGENT,
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
    };
  }

  async #signIn(accessToken: string): Promise<SignIn> {
    const userAnswer = await callProvider(
      `${this.config.apiBase}/user`,
      { headers: this.#apiHeaders(accessToken) },
      'profile',
    );
    if (userAnswer.status === 401) throw new ProviderRefusedError('profile: token refused', 'invalid_token');
    const user = jsonAnswer(userAnswer, 'profile');
    const id = user.id;
    // GitHub's ids are positive integers: anything else is not GitHub's answer, and must not become a -ID.
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0)
      throw new ProviderUnavailableError('profile: no numeric id');
    const login = stringField(user, 'login', 'profile');
    const email = await this.#primaryEmail(accessToken);
    const name = optionalText(user, 'name');
    const claims: Claim[] = [
      { typ: 'id', val: String(id) },
      { typ: 'login', val: login },
      ...(name !== undefined ? [{ typ: 'name', val: name }] : []),
      ...(email !== undefined ? [{ typ: 'email', val: email }] : []),
    ];
    return {
      userId: String(id),
      userName: login,
      nameType: 'login',
      roleType: 'roles',
      claims,
      tokens: { accessToken },
      access: await this.#access(accessToken, { id, login, ...(name !== undefined ? { name } : {}) }, email),
    };
  }

  /** The facts rules look at: the verified address, and (when a rule needs them) organisations and teams as groups. */
  async #access(
    accessToken: string,
    profile: Record<string, unknown>,
    email: string | undefined,
  ): Promise<AccessFacts> {
    const known = {
      ...(email !== undefined ? { verifiedEmail: email } : {}),
      roles: [],
      claims: { ...profile, ...(email !== undefined ? { email } : {}) },
    };
    if (this.config.organisations !== true) return { ...known, groups: [] };
    const organisations = await this.#pages(accessToken, '/user/orgs', 'organisations', (item) =>
      typeof item.login === 'string' ? asciiLowerCase(item.login) : undefined,
    );
    const teams = await this.#pages(accessToken, '/user/teams', 'teams', (item) => {
      const organisation = item.organization as Record<string, unknown> | null | undefined;
      return typeof item.slug === 'string' && typeof organisation?.login === 'string'
        ? `${asciiLowerCase(organisation.login)}/${asciiLowerCase(item.slug)}`
        : undefined;
    });
    const incomplete = [organisations, teams].find((list) => list.incomplete !== undefined)?.incomplete;
    return {
      ...known,
      groups: [...organisations.names, ...teams.names],
      ...(incomplete !== undefined ? { groupsIncomplete: incomplete } : {}),
    };
  }

  /**
   * Every page of a list of the user's (GitHub pages by `page`, at most 100 items a page). Refused
   * (403: the token lacks read:org, or an organisation's OAuth app policy hides it): none, said as incomplete.
   */
  async #pages(
    accessToken: string,
    path: string,
    what: string,
    name: (item: Record<string, unknown>) => string | undefined,
  ): Promise<{ names: string[]; incomplete?: string }> {
    const names: string[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const answer = await callProvider(
        `${this.config.apiBase}${path}?per_page=${PAGE_SIZE}&page=${page}`,
        { headers: this.#apiHeaders(accessToken) },
        what,
      );
      if (answer.status === 403 || answer.status === 404)
        return {
          names,
          incomplete: `GitHub did not tell the user's ${what} (answered ${answer.status}: is the read:org scope granted?)`,
        };
      let list: unknown;
      try {
        list = JSON.parse(answer.text);
      } catch {
        list = undefined;
      }
      if (answer.status !== 200 || !Array.isArray(list))
        throw new ProviderUnavailableError(`${what}: provider answered ${answer.status}`);
      for (const item of list) {
        if (typeof item !== 'object' || item === null) continue;
        const named = name(item as Record<string, unknown>);
        if (named !== undefined) names.push(named);
      }
      if (list.length < PAGE_SIZE) return { names };
    }
    return { names, incomplete: `the user is in more ${what} than gatehouse reads (${MAX_PAGES * PAGE_SIZE})` };
  }

  /** The primary, verified address; none when the token lacks the user:email scope. */
  async #primaryEmail(accessToken: string): Promise<string | undefined> {
    const answer = await callProvider(
      `${this.config.apiBase}/user/emails`,
      { headers: this.#apiHeaders(accessToken) },
      'e-mail addresses',
    );
    if (answer.status === 403 || answer.status === 404) return undefined;
    let list: unknown;
    try {
      list = JSON.parse(answer.text);
    } catch {
      list = undefined;
    }
    if (answer.status !== 200 || !Array.isArray(list))
      throw new ProviderUnavailableError(`e-mail addresses: provider answered ${answer.status}`);
    const primary = list.find(
      (e: unknown) =>
        typeof e === 'object' &&
        e !== null &&
        (e as { primary?: unknown }).primary === true &&
        (e as { verified?: unknown }).verified === true,
    ) as { email?: unknown } | undefined;
    return typeof primary?.email === 'string' ? primary.email : undefined;
  }
}
