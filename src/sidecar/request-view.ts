import type { IncomingMessage } from 'node:http';

import { BodyTimeoutError, BodyTooLargeError, type RequestView } from '../core/http/request-view.js';

function pairs(raw: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

/** How long a /.auth body (a form_post callback, a token exchange: 64 KiB at most) may take to arrive in full. */
export const DEFAULT_AUTH_BODY_DEADLINE_MS = 30_000;

/**
 * The core's view of a node:http request. The body is read only if the core asks (for /.auth/*
 * POSTs), and within `bodyDeadlineMs` in all: the connection's idle timeout alone would let a
 * client that drips a byte now and then hold the request, and its small buffer, for hours.
 */
export function toRequestView(req: IncomingMessage, scheme: 'http' | 'https', bodyDeadlineMs = DEFAULT_AUTH_BODY_DEADLINE_MS): RequestView {
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
        const settle = (outcome: () => void): void => {
          clearTimeout(deadline);
          req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
          outcome();
        };
        const stop = (error: Error): void =>
          settle(() => {
            req.pause(); // read no further
            reject(error);
          });
        const onData = (chunk: Buffer): void => {
          size += chunk.length;
          if (size > limit) stop(new BodyTooLargeError(limit));
          else chunks.push(chunk);
        };
        const onEnd = (): void => settle(() => resolve(Buffer.concat(chunks)));
        const onError = (error: Error): void => stop(error);
        // A client that goes away mid-body: settle, so nothing waits for an end that never comes.
        const onClose = (): void => stop(new Error('the request closed before its body ended'));
        const deadline = setTimeout(() => stop(new BodyTimeoutError(bodyDeadlineMs)), bodyDeadlineMs);
        req.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose);
      }),
  };
}
