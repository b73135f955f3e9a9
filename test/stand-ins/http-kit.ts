// The little HTTP plumbing the provider stand-ins share.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';

import { listen, type Listening } from '../support/http.js';

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(value));
}

export function sendText(res: ServerResponse, status: number, text: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type }).end(text);
}

export function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { location }).end();
}

export interface StandIn extends Listening {
  /** Every request the stand-in saw: method, path with query, headers, body. */
  readonly seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }>;
}

/** A server whose handler gets the parsed URL and the whole body; a thrown error is a 500. */
export async function startStandIn(
  handler: (req: IncomingMessage, res: ServerResponse, url: URL, body: string) => unknown,
): Promise<StandIn> {
  const seen: StandIn['seen'] = [];
  const server = http.createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://stand-in');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      await handler(req, res, url, body);
    })().catch((error: unknown) => {
      if (!res.headersSent) sendText(res, 500, (error as Error).message);
    });
  });
  return { ...(await listen(server)), seen };
}

/** A random token with a recognizable prefix, as providers issue them. */
export function token(prefix: string): string {
  return `${prefix}${Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64url')}`;
}
