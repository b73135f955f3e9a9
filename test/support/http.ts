import { once } from 'node:events';
import { createHmac } from 'node:crypto';
import http, { type IncomingHttpHeaders, type OutgoingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { createNodeHandler } from '../../src/webhook/node-handler.js';
import { WebhookReceiver } from '../../src/webhook/receiver.js';
import type { WebhookReceiverOptions } from '../../src/webhook/config.js';
import { createLogger } from '../../src/logging.js';

export const SECRET = "It's a Secret to Everybody";

export function sign(body: string | Uint8Array, secret: string = SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: unknown;
}

export interface Listening {
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function listen(server: Server): Promise<Listening> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A receiver behind a plain node:http server (no secret from the environment unless given). */
export async function startReceiver(
  options: WebhookReceiverOptions = {},
): Promise<Listening & { receiver: WebhookReceiver }> {
  const receiver = new WebhookReceiver({ env: {}, logger: createLogger('silent'), ...options });
  const listening = await listen(http.createServer(createNodeHandler(receiver)));
  return { ...listening, receiver };
}

export interface RequestSpec {
  method?: string;
  path?: string;
  headers?: OutgoingHttpHeaders;
  body?: string | Uint8Array;
  /** Send these pieces one by one, chunked (no Content-Length). */
  chunks?: Array<string | Uint8Array>;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function request(url: string, spec: RequestSpec = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}${spec.path ?? '/api/forge/webhook'}`,
      { method: spec.method ?? 'POST', headers: spec.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parse(text) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (spec.chunks) {
      for (const chunk of spec.chunks) req.write(chunk);
      req.end();
    } else {
      req.end(spec.body);
    }
  });
}

/** A signed JSON delivery. */
export function deliver(
  url: string,
  event: string | undefined,
  body: string | Uint8Array,
  extra: OutgoingHttpHeaders = {},
): Promise<Reply> {
  return request(url, {
    headers: {
      'content-type': 'application/json',
      'x-forge-signature-256': sign(body),
      ...(event === undefined ? {} : { 'x-forge-event': event }),
      ...extra,
    },
    body,
  });
}
