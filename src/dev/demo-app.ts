// The demo app behind `gatehouse dev`: shows what an app receives.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { escapeHtml } from '../core/http/responses.js';

function decodePrincipal(value: string | undefined): string {
  if (value === undefined) return '(none)';
  try {
    return JSON.stringify(JSON.parse(Buffer.from(value, 'base64').toString('utf8')), null, 2);
  } catch {
    return '(not valid base64 JSON)';
  }
}

function render(req: http.IncomingMessage, prefix: string, switchAccount: string | undefined): string {
  const identity = Object.entries(req.headers).filter(([name]) => name.startsWith(prefix.toLowerCase()));
  const rows = identity
    .map(([name, value]) => {
      const text = Buffer.from(String(value), 'latin1').toString('utf8');
      const shown = text.length > 80 ? `${text.slice(0, 77)}…` : text;
      return `<tr><th>${escapeHtml(name)}</th><td><code>${escapeHtml(shown)}</code></td></tr>`;
    })
    .join('');
  const signedIn = identity.length > 0;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>gatehouse demo app</title>
<style>body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem}th{text-align:left;padding-right:1rem;font-weight:600}td code{word-break:break-all}pre{background:#f4f4f4;padding:1rem;overflow:auto}</style></head>
<body><h1>gatehouse demo app</h1>
<p id="status">${signedIn ? `Signed in as <strong id="user">${escapeHtml(Buffer.from(String(req.headers[`${prefix.toLowerCase()}client-principal-name`] ?? ''), 'latin1').toString('utf8'))}</strong>.` : 'Not signed in (this page is excluded from authentication).'}</p>
<nav><a href="/.auth/me">/.auth/me</a> · <a href="/.auth/refresh">/.auth/refresh</a> · <a href="/.auth/logout">/.auth/logout</a>${switchAccount ? ` · <a id="switch-account" href="${escapeHtml(switchAccount)}">switch account</a>` : ''} · <a href="/">protected page</a> · <a href="/public/">public page</a></nav>
<h2>Identity headers received</h2>${rows ? `<table>${rows}</table>` : '<p>(none)</p>'}
<h2>Decoded ${escapeHtml(prefix)}CLIENT-PRINCIPAL</h2><pre id="principal">${escapeHtml(decodePrincipal(req.headers[`${prefix.toLowerCase()}client-principal`] as string | undefined))}</pre>
</body></html>`;
}

/** `switchAccount`: where a sign-in with another account starts (a link on the page), if anywhere. */
export async function startDemoApp(
  prefix = 'X-PLATFORM-',
  switchAccount?: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    res
      .writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' })
      .end(render(req, prefix, switchAccount));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
