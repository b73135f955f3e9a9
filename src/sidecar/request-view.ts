import type { IncomingMessage } from 'node:http';

import { BodyTooLargeError, type RequestView } from '../core/http/request-view.js';

function pairs(raw: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

/** The core's view of a node:http request. The body is read only if the core asks (for /.auth/* POSTs). */
export function toRequestView(req: IncomingMessage, scheme: 'http' | 'https'): RequestView {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return {
    method: req.method ?? 'GET',
    path: q === -1 ? url : url.slice(0, q),
    query: q === -1 ? '' : url.slice(q + 1),
    headers: pairs(req.rawHeaders),
    scheme,
    host: req.headers.host ?? '',
    remoteAddress: req.socket.remoteAddress ?? '',
    readBody: (limit) =>
      new Promise<Buffer>((resolve, reject) => {
        // A declared length over the limit is refused before a byte is read.
        if (Number(req.headers['content-length']) > limit) {
          reject(new BodyTooLargeError(limit));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        req.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > limit) {
            req.pause();
            reject(new BodyTooLargeError(limit));
            return;
          }
          chunks.push(chunk);
        });
        req.once('end', () => resolve(Buffer.concat(chunks)));
        req.once('error', reject);
        // A client that goes away mid-body: settle, so nothing waits for an end that never comes (a no-op after 'end').
        req.once('close', () => reject(new Error('the request closed before its body ended')));
      }),
  };
}
