// What the auth core tells a metrics sink (the host's Prometheus registry, or
// nothing): sign-ins, refreshes and logouts by provider and result, and how long
// the provider took. Labels are provider aliases and fixed words only: never a
// user, a session or a path.

export type SignInResult = 'success' | 'refused' | 'unavailable' | 'error';
export type RefreshResult = 'success' | 'refused' | 'unavailable';
export type LogoutKind = 'local' | 'provider';
export type ProviderOperation = 'sign_in' | 'refresh';
export type StoreOperation = 'get' | 'put' | 'delete';
/** Why an authorization rule refused a signed-in caller (authorization/access-rule.ts). */
export type AuthorizationRefusalReason = 'not_allowed' | 'groups_incomplete';

export interface AuthMetrics {
  signIn(provider: string, result: SignInResult): void;
  refresh(provider: string, result: RefreshResult): void;
  logout(provider: string, kind: LogoutKind): void;
  /** One call to the provider (the code exchange of a sign-in, a refresh), however it ended. */
  providerCall(provider: string, operation: ProviderOperation, seconds: number): void;
  /** One operation of the token store (`store`: its kind), however it ended. */
  storeCall(store: string, operation: StoreOperation, seconds: number): void;
  /** A signed-in caller an authorization rule turned away (403); `rule`: where the rule is configured (`default`, `paths.0`). */
  authorizationRefused(reason: AuthorizationRefusalReason, rule: string): void;
}

export const NO_METRICS: AuthMetrics = {
  signIn: () => undefined,
  refresh: () => undefined,
  logout: () => undefined,
  providerCall: () => undefined,
  storeCall: () => undefined,
  authorizationRefused: () => undefined,
};

/** Seconds since `started` (performance.now() ms). */
export function secondsSince(started: number): number {
  return (performance.now() - started) / 1000;
}
