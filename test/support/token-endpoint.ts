// For tests that stand between gatehouse and the test provider's token endpoint (startDeployment's
// interceptProvider): which requests are gatehouse's token calls, and how to pass one on to the
// real endpoint, so that the test can change, hold or replace the provider's answer.
import type http from 'node:http';

/** Marks the interceptor's own call to the token endpoint, which it lets through. */
const PASS_THROUGH = 'x-test-pass-through';

/** Whether `req` is gatehouse's call to the provider's token endpoint. */
export function isTokenCall(req: http.IncomingMessage): boolean {
  return req.method === 'POST' && (req.url ?? '').startsWith('/token') && req.headers[PASS_THROUGH] === undefined;
}

/** The whole body of `req`. */
export function bodyOf(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Sends gatehouse's token request (its client authentication and body) on to the provider at `issuer`: the provider's own answer. */
export function passToProvider(issuer: string, req: http.IncomingMessage, body: Buffer): Promise<globalThis.Response> {
  const headers = Object.fromEntries(
    Object.entries(req.headers).filter(([name]) => ['authorization', 'content-type', 'accept'].includes(name)) as Array<
      [string, string]
    >,
  );
  return fetch(`${issuer}/token`, { method: 'POST', headers: { ...headers, [PASS_THROUGH]: '1' }, body });
}
