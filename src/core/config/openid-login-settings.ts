// What an OpenID provider's `login` block sets besides its login parameters (login-parameters.ts):
// the scopes asked for, and whether authorization requests are pushed.

export function withOpenId(scopes: readonly string[]): string[] {
  return scopes.includes('openid') ? [...scopes] : ['openid', ...scopes];
}

/** The scopes configured (else openid, profile and email) and those a `scope=` login parameter adds, each once; openid always. */
export function oidcScopes(configured: readonly string[] | undefined, added: readonly string[]): string[] {
  return withOpenId([...new Set([...(configured ?? ['openid', 'profile', 'email']), ...added])]);
}

/** login.pushedAuthorizationRequests, when set. */
export function pushed(login: { readonly pushedAuthorizationRequests?: boolean } | undefined) {
  const value = login?.pushedAuthorizationRequests;
  return value === undefined ? {} : { pushedAuthorizationRequests: value };
}
