/** The decoded X-PLATFORM-CLIENT-PRINCIPAL of forwarded headers. */
export function principal(headers: Record<string, unknown>): {
  auth_typ: string;
  name_typ: string;
  role_typ: string;
  claims: Array<{ typ: string; val: string }>;
} {
  return JSON.parse(Buffer.from(String(headers['x-platform-client-principal']), 'base64').toString('utf8'));
}

/** What the echoing upstream app received, from the last hop of a followed sign-in. */
export function forwarded(body: string): { url: string; headers: Record<string, string> } {
  return JSON.parse(body) as { url: string; headers: Record<string, string> };
}
