import type { IncomingMessage } from 'node:http';

import { BodyTimeoutError, BodyTooLargeError, type RequestView } from '../core/http/request-view.js';
import { BodyReadError, readRawBody } from '../webhook/body.js';
import type { RequestTarget } from './request-target.js';

function pairs(raw: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

/**
 * How long a /.auth body (a form_post callback, a token exchange: 64 KiB at most) may take to
 * arrive in full. The IIS module has the same deadline (kAuthBodyDeadlineMs in binding/iis/gatehouse_module.cpp).
 */
export const DEFAULT_AUTH_BODY_DEADLINE_MS = 30_000;

/**
 * The core's view of a node:http request, whose target the front door parsed (`target`). The body is read only if the core asks (for /.auth/*
 * POSTs), and within `bodyDeadlineMs` in all: the connection's idle timeout alone would let a
 * client that drips a byte now and then hold the request, and its small buffer, for hours.
 */
export function toRequestView(
  req: IncomingMessage,
  target: RequestTarget,
  scheme: 'http' | 'https',
  bodyDeadlineMs = DEFAULT_AUTH_BODY_DEADLINE_MS,
): RequestView {
  return {
    method: req.method ?? 'GET',
    path: target.path,
    query: target.query,
    headers: pairs(req.rawHeaders),
    scheme,
    host: req.headers.host ?? '',
    remoteAddress: req.socket.remoteAddress ?? '',
    readBody: async (limit) => {
      try {
        // Timed by the deadline alone: within it, pauses do not matter.
        return await readRawBody(req, {
          limitBytes: limit,
          timeoutMs: bodyDeadlineMs,
          deadlineMs: bodyDeadlineMs,
          declaredLength: req.headers['content-length'],
        });
      } catch (error) {
        if (!(error instanceof BodyReadError)) throw error;
        if (error.failure === 'too-large') throw new BodyTooLargeError(limit);
        if (error.failure === 'timeout') throw new BodyTimeoutError(bodyDeadlineMs);
        throw error; // aborted, or shorter than its Content-Length: unreadable
      }
    },
  };
}
