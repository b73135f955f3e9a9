// What `--upstream` may be: the app's origin and nothing more. Every request is
// forwarded with its own path to that origin; a path, query or fragment in the
// URL would be glued in front of each request's path by the proxy (`/app?x=1/foo`),
// and credentials would end up in logs without ever reaching the app.

/** The app's origin (`scheme://host[:port]`), or why the value cannot be one. */
export type UpstreamUrl = { readonly origin: string } | { readonly problem: string };

/** What was most likely meant by a value without a scheme: `localhost:3000`, `127.0.0.1:3000`, `app:8080`, or a port alone. */
function withoutScheme(value: string): string | undefined {
  if (/^\d{1,5}$/.test(value)) return `http://127.0.0.1:${value}`;
  if (/^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?\/?$/.test(value))
    return `http://${value.replace(/\/$/, '')}`;
  return undefined;
}

export function parseUpstreamUrl(value: string): UpstreamUrl {
  const suggestion = withoutScheme(value);
  if (suggestion !== undefined) return { problem: `has no scheme: did you mean ${suggestion}?` };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: "is not a URL: expected the app's origin, such as http://127.0.0.1:3000" };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { problem: `must be an http(s) URL, such as http://127.0.0.1:3000 (its scheme is ${url.protocol})` };
  // Shown back without credentials, query or fragment, which may hold secrets.
  const shown = `${url.protocol}//${url.host}${url.pathname}`;
  if (url.username !== '' || url.password !== '')
    return { problem: `must not carry credentials (got ${shown} with a user name or password)` };
  if (url.pathname !== '/')
    return {
      problem: `must be the app's origin without a path (got ${shown}): each request is forwarded with its own path`,
    };
  if (url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#'))
    return { problem: `must not have a query or fragment (got ${shown})` };
  return { origin: url.origin };
}
