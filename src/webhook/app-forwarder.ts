// Passes a verified delivery on to the app behind gatehouse (`serve --upstream`), through undici,
// and brings the app's answer back in a form the delivery registry can remember (JSON: the status,
// two headers and the body, base64, bounded). The app receives POST on the configured path (with
// the query the sender used), the headers of app-headers.ts and the exact body bytes.
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

import type { Dispatcher } from 'undici';

import type { WebhookRequest } from './receiver.js';

/** The most of the app's answer body passed back to the sender (and remembered); the rest is cut off. */
export const APP_ANSWER_LIMIT_BYTES = 64 * 1024;

/** The app's answer to a delivery, as remembered for its redeliveries: JSON-serializable. */
export interface AppAnswer {
  readonly status: number;
  readonly contentType?: string;
  readonly retryAfter?: string;
  /** Base64 of the body's first APP_ANSWER_LIMIT_BYTES bytes. */
  readonly body: string;
  /** The body was longer and was cut off. */
  readonly truncated?: boolean;
}

/** The delivery did not get an answer from the app: gatehouse's own status for the sender. */
export class AppUnavailableError extends Error {
  constructor(
    readonly status: 502 | 503 | 504,
    readonly reason: string,
  ) {
    super(`the app did not answer the delivery: ${reason}`);
    this.name = 'AppUnavailableError';
  }
}

/** Where verified deliveries go. */
export interface WebhookApp {
  send(request: WebhookRequest, body: Buffer, path: string): Promise<AppAnswer>;
}

export interface UpstreamWebhookAppOptions {
  /** The connections to the app. */
  readonly dispatcher: Dispatcher;
  /** The whole exchange (headers and the answer, up to the limit) must be over within this, else 504. */
  readonly timeoutMs: number;
  /** The headers the app receives (DeliveryHeadersForApp). */
  readonly headersFor: (request: WebhookRequest) => IncomingHttpHeaders;
  /** Takes a place among the requests in flight to the app (the proxy's bound); false when full (503). */
  readonly admit?: () => boolean;
  readonly release?: () => void;
}

const TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

class Deadline extends Error {}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function readBounded(body: Readable, limit: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (length + chunk.length > limit) {
      chunks.push(chunk.subarray(0, limit - length));
      length = limit;
      body.destroy(); // read no further: the connection goes, not the answer
      return { bytes: Buffer.concat(chunks, length), truncated: true };
    }
    chunks.push(chunk);
    length += chunk.length;
  }
  return { bytes: Buffer.concat(chunks, length), truncated: false };
}

export class UpstreamWebhookApp implements WebhookApp {
  constructor(private readonly options: UpstreamWebhookAppOptions) {}

  async send(request: WebhookRequest, body: Buffer, path: string): Promise<AppAnswer> {
    const { admit, release, timeoutMs } = this.options;
    if (admit !== undefined && !admit()) throw new AppUnavailableError(503, 'upstream pool full');
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Deadline('deadline')), timeoutMs);
    try {
      const answer = await this.options.dispatcher.request({
        method: 'POST',
        path: path + queryOf(request.url),
        headers: this.options.headersFor(request) as Record<string, string | string[]>,
        body,
        signal: deadline.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const { bytes, truncated } = await readBounded(answer.body, APP_ANSWER_LIMIT_BYTES);
      const contentType = single(answer.headers['content-type']);
      const retryAfter = single(answer.headers['retry-after']);
      return {
        status: answer.statusCode,
        ...(contentType !== undefined ? { contentType } : {}),
        ...(retryAfter !== undefined ? { retryAfter } : {}),
        body: bytes.toString('base64'),
        ...(truncated ? { truncated } : {}),
      };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (deadline.signal.aborted || (code !== undefined && TIMEOUTS.has(code)))
        throw new AppUnavailableError(504, 'upstream timeout');
      throw new AppUnavailableError(502, code ?? (error as Error).message);
    } finally {
      clearTimeout(timer);
      release?.();
    }
  }
}

/** The query the sender used (`?…`), passed on with the delivery; '' when none. */
function queryOf(url: string | undefined): string {
  if (url === undefined) return '';
  const start = url.indexOf('?');
  if (start === -1) return '';
  const end = url.indexOf('#', start);
  return end === -1 ? url.slice(start) : url.slice(start, end);
}
