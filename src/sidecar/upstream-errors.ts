import type { ServerResponse } from 'node:http';

import { escapeHtml } from '../core/http/responses.js';

/** 502 (unreachable, broken) or 504 (too slow), as a page for browsers and JSON for APIs. */
export function sendUpstreamError(res: ServerResponse, status: 502 | 504, wantsJson: boolean): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const message = status === 504 ? 'The application did not answer in time.' : 'The application is not reachable right now.';
  const title = status === 504 ? 'Gateway Timeout' : 'Bad Gateway';
  const body = wantsJson
    ? JSON.stringify({ error: message })
    : `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${status} ${title}</title></head><body><h1>${status} ${title}</h1><p>${escapeHtml(message)} Please try again in a moment.</p></body></html>`;
  res.writeHead(status, {
    'Content-Type': wantsJson ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}
