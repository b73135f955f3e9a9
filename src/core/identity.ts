/** One claim of the principal, as it appears in X-PLATFORM-CLIENT-PRINCIPAL. */
export interface Claim {
  readonly typ: string;
  readonly val: string;
}

/** Provider tokens that may be exposed to the app as X-PLATFORM-TOKEN-* headers. */
export interface IdentityTokens {
  readonly accessToken?: string;
  readonly idToken?: string;
  readonly expiresOn?: string;
  readonly refreshToken?: string;
  /** OAuth 1.0a providers: the access token's secret. */
  readonly accessTokenSecret?: string;
}

/** Who the caller is: everything the identity headers are built from. */
export interface Identity {
  /** Provider alias: the -IDP header and the <PROVIDER> of token headers. */
  readonly provider: string;
  /** The -ID header (e.g. the `sub` claim). */
  readonly userId: string;
  /** The -NAME header. */
  readonly userName: string;
  /** principal.auth_typ */
  readonly authType: string;
  /** principal.name_typ: the claim type that names the user. */
  readonly nameType: string;
  /** principal.role_typ: the claim type that carries roles. */
  readonly roleType: string;
  readonly claims: ReadonlyArray<Claim>;
  readonly tokens?: IdentityTokens;
}

/** Control characters other than tab: Node refuses them in a header value it sends, and CR, LF or NUL would split one. */
const UNSENDABLE = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/** Whether a value can travel as a header value (to the app, or to the provider as a credential). */
export function isSendable(value: string): boolean {
  return !UNSENDABLE.test(value);
}

/** The values of a sign-in that become identity headers (the principal itself is base64, and holds anything). */
export interface HeaderBoundValues {
  readonly userId: string;
  readonly userName: string;
  readonly tokens: Omit<IdentityTokens, 'expiresOn'>;
}

/**
 * Whether a sign-in names no user: an id that is missing, not a string (read as ''), or blank.
 * Such a caller would reach the app as one and the same empty user as every other such caller,
 * so it is refused wherever an identity is made (a sign-in, a bearer token, a token exchange).
 */
export function lacksUserId(values: Pick<HeaderBoundValues, 'userId'>): boolean {
  return values.userId.trim() === '';
}

/**
 * Which value of a sign-in could not be sent to the app as a header (its name, for logs), or
 * undefined when all can. Checked where a session or a bearer identity is made: a session made
 * with such a value would fail every request after it.
 */
export function unsendableHeaderValue(values: HeaderBoundValues): string | undefined {
  if (UNSENDABLE.test(values.userId)) return 'user id';
  if (UNSENDABLE.test(values.userName)) return 'user name';
  const { tokens } = values;
  if (tokens.accessToken !== undefined && UNSENDABLE.test(tokens.accessToken)) return 'access token';
  if (tokens.idToken !== undefined && UNSENDABLE.test(tokens.idToken)) return 'ID token';
  if (tokens.refreshToken !== undefined && UNSENDABLE.test(tokens.refreshToken)) return 'refresh token';
  if (tokens.accessTokenSecret !== undefined && UNSENDABLE.test(tokens.accessTokenSecret)) return 'access token secret';
  return undefined;
}

export interface NormalizeOptions {
  /** Header prefix, default `X-PLATFORM-`. Emitted upper-case, `_`/`.` as `-`. */
  readonly prefix?: string;
  /** Emit X-<prefix>TOKEN-* headers for the identity's tokens (default true). */
  readonly exposeTokens?: boolean;
}

/**
 * What a host must do to a request's headers. Names and values are byte
 * strings (one character per byte, as Node's http layer writes them), so
 * non-ASCII identity text travels as UTF-8 bytes.
 */
export interface NormalizedHeaders {
  readonly remove: string[];
  readonly set: Array<[name: string, value: string]>;
}

export const DEFAULT_HEADER_PREFIX = 'X-PLATFORM-';

/** Thrown when an identity value holds CR, LF or NUL: it would split a header. */
export class HeaderValueError extends Error {
  readonly code = 'ERR_GH_FORBIDDEN_CHARACTER';
  constructor() {
    super('Identity header value contains CR, LF or NUL.');
    this.name = 'HeaderValueError';
  }
}
