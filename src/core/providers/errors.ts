// How a provider can fail, as the user sees it: unavailable (502, try again
// later) or refused (401, sign in again). Nothing else leaves a provider.

/** The provider could not be reached or answered nonsense: the user sees 502. */
export class ProviderUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderUnavailableError';
  }
}

/** The provider refused (invalid_grant, bad token, failed ID token check): the user must sign in again. */
export class ProviderRefusedError extends Error {
  constructor(
    message: string,
    readonly oauthError?: string,
  ) {
    super(message);
    this.name = 'ProviderRefusedError';
  }
}
