// A provider's `login.loginParameters` (and Easy Auth's `loginParameterNames`): extra parameters
// of the authorization request, sorted into what gatehouse adds as given and what it must not
// pass on as given. Several parameters belong to the protocol gatehouse runs: passed on, they
// either were overridden without a word (a `redirect_uri` someone expected to take effect) or
// broke sign-in (`response_mode=form_post` made the provider POST the callback cross-site, where
// the login cookie, SameSite=Lax, did not come back).

/**
 * The authorization request parameters gatehouse sets on every sign-in (the authorization code flow
 * with PKCE, the callback URL): a login parameter of the same name is ignored, with a warning. Not
 * to be mistaken for the forwarding headers gatehouse sets (FORWARDING_HEADERS_SET_BY_GATEHOUSE).
 */
const AUTHORIZATION_PARAMETERS_SET_BY_GATEHOUSE = [
  'client_id',
  'redirect_uri',
  'response_type',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'request',
  'request_uri',
] as const;

/** How a callback can reach gatehouse: in the query of a redirect, or as a form the browser POSTs. */
const RESPONSE_MODES = ['query', 'form_post'] as const;
export type ResponseMode = (typeof RESPONSE_MODES)[number];

/** One scope token (RFC 6749 §3.3). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

export interface LoginSettings {
  readonly loginParameters?: readonly string[] | Readonly<Record<string, string>>;
  readonly loginParameterNames?: readonly string[];
}

export interface LoginParameters {
  /** Added to the authorization request as given. */
  readonly extra: Record<string, string>;
  /** From `scope=…`: added to the provider's scopes (Easy Auth documents `scope=openid offline_access` for refresh tokens). */
  readonly scopes: readonly string[];
  /** From `response_mode=…`, when given. */
  readonly responseMode?: ResponseMode;
}

/** Every `name=value` string (the schema checked the `=`), then an object's entries; a later name wins. */
function given(login: LoginSettings | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const pairs = [
    ...(Array.isArray(login?.loginParameters) ? login.loginParameters : []),
    ...(login?.loginParameterNames ?? []),
  ];
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  if (login?.loginParameters !== undefined && !Array.isArray(login.loginParameters))
    Object.assign(out, login.loginParameters);
  return out;
}

/** The login parameters of the provider at `path`; mistakes go to `problems`, ignored parameters to `warnings`. */
export function loginParameters(
  path: string,
  login: LoginSettings | undefined,
  problems: string[],
  warnings: string[],
): LoginParameters {
  const extra: Record<string, string> = {};
  const scopes: string[] = [];
  let responseMode: ResponseMode | undefined;
  const where = `${path}.login.loginParameters`;
  for (const [name, value] of Object.entries(given(login))) {
    if (name === 'scope') {
      const tokens = value.split(' ').filter(Boolean);
      const bad = tokens.find((token) => !SCOPE_TOKEN.test(token));
      if (bad !== undefined) problems.push(`${where}: scope: ${JSON.stringify(bad)} is not a scope token`);
      scopes.push(...tokens);
    } else if (name === 'response_mode') {
      if ((RESPONSE_MODES as readonly string[]).includes(value)) responseMode = value as ResponseMode;
      else
        problems.push(
          `${where}: response_mode ${JSON.stringify(value)}: expected query or form_post (gatehouse cannot receive any other)`,
        );
    } else if ((AUTHORIZATION_PARAMETERS_SET_BY_GATEHOUSE as readonly string[]).includes(name)) {
      warnings.push(
        `${where}: ${name} is set by gatehouse on every sign-in (authorization code flow with PKCE, the callback URL from the request's origin); this one is ignored`,
      );
    } else {
      extra[name] = value;
    }
  }
  return { extra, scopes, ...(responseMode !== undefined ? { responseMode } : {}) };
}
