// The pages the sidecar writes itself when it cannot give the app's answer:
// HTML for browsers, JSON for APIs, never a stack trace.
import type { ServerResponse } from 'node:http';

import { escapeHtml } from '../core/http/responses.js';

/** 500: gatehouse itself failed (say, its token store); 502: the app is unreachable or broke; 504: the app was too slow. */
export type GatewayErrorStatus = 500 | 502 | 504;

const PAGES: Record<GatewayErrorStatus, { readonly title: string; readonly message: string }> = {
  500: { title: 'Internal Server Error', message: 'Sign-in could not be checked because of an error on the server.' },
  502: { title: 'Bad Gateway', message: 'The application is not reachable right now.' },
  504: { title: 'Gateway Timeout', message: 'The application did not answer in time.' },
};

export interface ErrorPage {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export function errorPage(status: GatewayErrorStatus, wantsJson: boolean): ErrorPage {
  const { title, message } = PAGES[status];
  const body = wantsJson
    ? JSON.stringify({ error: message })
    : `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${status} ${title}</title></head><body><h1>${status} ${title}</h1><p>${escapeHtml(message)} Please try again in a moment.</p></body></html>`;
  return {
    headers: {
      'Content-Type': wantsJson ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Length': String(Buffer.byteLength(body)),
    },
    body,
  };
}

/** Writes the page, or, once the app's answer has begun, cuts the connection (a half answer must not look whole). */
export function sendErrorPage(res: ServerResponse, status: GatewayErrorStatus, wantsJson: boolean): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const page = errorPage(status, wantsJson);
  res.writeHead(status, page.headers);
  res.end(page.body);
}
