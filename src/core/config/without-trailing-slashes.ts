/** An endpoint or origin as configured, trailing slashes off, so paths can be appended. */
export function withoutTrailingSlashes(url: string): string {
  return url.replace(/\/+$/, '');
}
