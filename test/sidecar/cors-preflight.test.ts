// gatehouse.forwardCorsPreflights: a browser's CORS preflight (OPTIONS with Origin and
// Access-Control-Request-Method, never with credentials) reaches the app anonymously, for the
// app's CORS policy to answer, instead of being challenged. Off by default.
import type { IncomingMessage, ServerResponse } from 'node:http';

import { expect } from 'chai';

import { AuthConfigError, resolveAuthConfig } from '../../src/core/config/auth-config.js';
import { Browser } from '../support/browser.js';
import { defaultDocument, signIn, startDeployment, type Deployment } from '../support/sign-in.js';

const PREFLIGHT = {
  origin: 'https://spa.example',
  'access-control-request-method': 'POST',
  'access-control-request-headers': 'content-type, authorization',
};

/** The app answers preflights itself, as an app with a CORS policy does. */
function corsApp(seen: Array<{ method: string; url: string; headers: Record<string, unknown> }>) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers } });
    if (req.method === 'OPTIONS') {
      res
        .writeHead(204, {
          'access-control-allow-origin': 'https://spa.example',
          'access-control-allow-methods': 'POST',
          'access-control-allow-credentials': 'true',
        })
        .end();
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ id: req.headers['x-platform-client-principal-id'] ?? null }));
  };
}

async function send(
  url: string,
  method: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Headers }> {
  const answer = await fetch(url, { method, headers, redirect: 'manual' });
  await answer.arrayBuffer();
  return { status: answer.status, headers: answer.headers };
}

describe('CORS preflights with gatehouse.forwardCorsPreflights', function () {
  this.timeout(30_000);
  const seen: Array<{ method: string; url: string; headers: Record<string, unknown> }> = [];
  let deployment: Deployment;
  before(async () => {
    deployment = await startDeployment({
      document: (issuer) => ({ ...defaultDocument(issuer), gatehouse: { forwardCorsPreflights: true } }),
      upstreamHandler: corsApp(seen),
    });
  });
  after(() => deployment.close());
  beforeEach(() => (seen.length = 0));

  it('a preflight on a protected path reaches the app, which answers it', async () => {
    const answer = await send(`${deployment.url}/api/orders`, 'OPTIONS', PREFLIGHT);
    expect(answer.status).to.equal(204);
    expect(answer.headers.get('access-control-allow-origin')).to.equal('https://spa.example');
    expect(seen.map((r) => [r.method, r.url])).to.deep.equal([['OPTIONS', '/api/orders']]);
  });

  it('forwarded anonymously: spoofed identity headers stripped, a session cookie gives it no identity', async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    const cookie = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
    seen.length = 0;
    await send(`${deployment.url}/api/orders`, 'OPTIONS', {
      ...PREFLIGHT,
      cookie,
      'x-platform-client-principal-id': 'admin',
      X_PLATFORM_CLIENT_PRINCIPAL_NAME: 'admin',
    });
    expect(seen).to.have.length(1);
    expect(Object.keys(seen[0]!.headers).filter((name) => /platform/i.test(name))).to.deep.equal([]);
  });

  it('the request after it is authenticated as always: anonymous is challenged, signed in is forwarded', async () => {
    expect(
      (
        await send(`${deployment.url}/api/orders`, 'POST', {
          origin: 'https://spa.example',
          accept: 'application/json',
        })
      ).status,
    ).to.equal(401);
    const browser = new Browser();
    await signIn(browser, deployment);
    const signedIn = await browser.request(`${deployment.url}/api/orders`, {
      method: 'POST',
      headers: { origin: 'https://spa.example' },
    });
    expect(signedIn.status).to.equal(200);
    expect(JSON.parse(signedIn.body)).to.deep.equal({ id: 'demo' });
  });

  it('OPTIONS that is not a preflight is challenged like any request: no Origin, no requested method, neither, another method', async () => {
    const json = { accept: 'application/json' };
    for (const [method, headers] of [
      ['OPTIONS', { ...json, 'access-control-request-method': 'POST' }],
      ['OPTIONS', { ...json, origin: 'https://spa.example' }],
      ['OPTIONS', json],
      ['GET', { ...json, ...PREFLIGHT }],
      ['DELETE', { ...json, ...PREFLIGHT }],
    ] as const) {
      expect(
        (await send(`${deployment.url}/api/orders`, method, headers)).status,
        `${method} ${JSON.stringify(headers)}`,
      ).to.equal(401);
    }
    expect(seen).to.deep.equal([]);
  });

  it("gatehouse's own endpoints are not forwarded: a preflight to /.auth/me gets 405", async () => {
    expect((await send(`${deployment.url}/.auth/me`, 'OPTIONS', PREFLIGHT)).status).to.equal(405);
    expect(seen).to.deep.equal([]);
  });

  it('a non-boolean setting is a configuration error naming its path', () => {
    const document = { ...defaultDocument('https://idp.example'), gatehouse: { forwardCorsPreflights: 'yes' } };
    expect(() => resolveAuthConfig(document, { TEST_CLIENT_SECRET: 's' })).to.throw(
      AuthConfigError,
      /gatehouse\.forwardCorsPreflights: /,
    );
  });
});

describe('CORS preflights by default', function () {
  this.timeout(30_000);
  it('are challenged on a protected path, and never reach the app', async () => {
    const seen: Array<{ method: string; url: string; headers: Record<string, unknown> }> = [];
    const deployment = await startDeployment({ upstreamHandler: corsApp(seen) });
    try {
      expect((await send(`${deployment.url}/api/orders`, 'OPTIONS', PREFLIGHT)).status).to.equal(401);
      expect(seen).to.deep.equal([]);
      // On an excluded path it reaches the app, as every request there does.
      expect((await send(`${deployment.url}/public/data`, 'OPTIONS', PREFLIGHT)).status).to.equal(204);
    } finally {
      await deployment.close();
    }
  });
});
