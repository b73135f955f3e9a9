// How a place in the configuration document is named in problems and warnings:
// `login.cookieExpiration.timeToExpiration`, `globalValidation.excludedPaths.0`. A key that is not
// a plain name is written as a JSON string in brackets (`customOpenIdConnectProviders[" "]`), so
// that a key holding a dot, a space or a control character can neither pass for another path nor
// write control characters to the terminal the problem is printed on.

const PLAIN_KEY = /^[A-Za-z0-9_$-]+$/;

export function jsonPath(segments: ReadonlyArray<PropertyKey>): string {
  let path = '';
  for (const segment of segments) {
    const key = String(segment);
    if (PLAIN_KEY.test(key)) path += path === '' ? key : `.${key}`;
    else path += `[${JSON.stringify(key)}]`;
  }
  return path;
}
