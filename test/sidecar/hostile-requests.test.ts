// Generated hostile requests against every route of a running sidecar (a real provider behind
// it), each checked for what must hold whatever is sent: a clear answer, never a 500; no
// redirect to anywhere but this site or its provider; nothing reaches the app on a protected
// path without an identity; and none of the credentials sent (forged or not) is ever logged.
import { expect } from 'chai';
import fc from 'fast-check';

import { Browser } from '../support/browser.js';
import { capturingLogger, type CapturedLogs } from '../support/logs.js';
import { signIn, startDeployment, type Deployment } from '../support/sign-in.js';

/** Sent in every credential-like place; the logs must never contain it. */
const MARKER = 'zq7secretmarker';

const ROUTES = [
  '/.auth/login/dev',
  '/.auth/login/DEV',
  '/.auth/login/dev/callback',
  '/.auth/login/nope',
  '/.auth/login/nope/callback',
  '/.auth/login/done',
  '/.auth/login',
  '/.auth/me',
  '/.auth/refresh',
  '/.auth/logout',
  '/.auth/logout/done',
  '/.auth/logout/complete',
  '/.auth/logout/backchannel/dev',
  '/.auth/version',
  '/.auth',
  '/.auth/x',
  '/protected',
  '/public/file',
  '/public/../protected',
  '/%2e%2e/protected',
  '/',
];
const PARAMETERS = [
  'code',
  'state',
  'error',
  'error_description',
  'iss',
  'post_login_redirect_uri',
  'post_login_redirect_url',
  'post_logout_redirect_uri',
  'prompt',
  'user',
  'id_token_hint',
  'logout_token',
];

const hostileText = fc.oneof(
  fc.constantFrom(
    '',
    '%',
    '%00',
    '%zz',
    '//evil.example',
    '/.//evil.example',
    'https://evil.example',
    'javascript:alert(1)',
    '\u2028',
    '../../',
    '[]',
    '{}',
    'null',
    '"',
    "'",
    '<script>',
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.integer({ min: 1, max: 9000 }).map((n) => 'a'.repeat(n)),
);
/** Parameters that carry credentials: the marker goes there too. The others (an `error` code, say) are logged, bounded, by design. */
const CREDENTIALS = new Set(['code', 'state', 'id_token_hint', 'logout_token']);
const parameter = fc
  .constantFrom(...PARAMETERS)
  .chain((name) =>
    fc.tuple(fc.constant(name), CREDENTIALS.has(name) ? fc.oneof(hostileText, fc.constant(MARKER)) : hostileText),
  );
const query = fc
  .array(
    fc.tuple(parameter, fc.boolean()).map(([[name, value], encode]) => [name, value, encode] as const),
    { maxLength: 5 },
  )
  .map((pairs) =>
    pairs
      .map(
        ([name, value, encode]) =>
          `${name}=${encode ? encodeURIComponent(value) : value.replace(/[^\x21-\x7e]/gu, encodeURIComponent).replace(/#/g, '%23')}`,
      )
      .join('&'),
  );
// Header values must be what HTTP can carry (visible ASCII and spaces); the credentials all hold the marker.
const token = fc.constantFrom(MARKER, `${MARKER}.${MARKER}.${MARKER}`, `eyJhbGciOiJub25lIn0.${MARKER}.`, `ey${MARKER}`);
const headers = fc.record(
  {
    cookie: fc
      .array(
        fc.tuple(
          fc.constantFrom(
            'PlatformAuthSession',
            'PlatformAuthSessionLogin_x',
            'PlatformAuthSessionLogin_',
            'platformauthsession',
            'other',
          ),
          token,
        ),
        { maxLength: 4 },
      )
      .map((cookies) => cookies.map(([name, value]) => `${name}=${value}`).join('; ')),
    authorization: token.map((t) => `Bearer ${t}`),
    'x-zumo-auth': token,
    accept: fc.constantFrom('text/html', 'application/json', '*/*', ''),
    'content-type': fc.constantFrom(
      'application/json',
      'application/x-www-form-urlencoded',
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/json; charset=utf-16',
    ),
    'x-requested-with': fc.constant('XMLHttpRequest'),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  fc.constant(undefined),
  hostileText,
  fc.constant(MARKER),
  fc.constantFrom(
    `{"access_token":"${MARKER}"}`,
    `{"id_token":"${MARKER}"}`,
    `{"authorization_code":"${MARKER}"}`,
    `logout_token=${MARKER}`,
    `code=${MARKER}&state=${MARKER}`,
    '{"id_token":',
    '[]',
    '{"access_token":null}',
  ),
);
const request = fc.record({
  method: fc.constantFrom('GET', 'GET', 'POST', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'HEAD'),
  route: fc.constantFrom(...ROUTES),
  query,
  headers,
  body,
});

// Identity headers a client could send in any spelling a server might merge with the real ones.
const SPOOFED = 'zq7spoofedidentity';
const spoofedHeaders = fc
  .array(
    fc.tuple(
      fc.constantFrom(
        'X-PLATFORM-CLIENT-PRINCIPAL',
        'x-platform-client-principal-id',
        'X_PLATFORM_CLIENT_PRINCIPAL_NAME',
        'x.platform.client.principal.idp',
        'X-Platform-Token-Dev-Access-Token',
        'x_platform_token_dev_id_token',
        'X-Forwarded-For',
        'X_Forwarded_Host',
        'X-Original-URL',
        'Forwarded',
      ),
      fc.constantFrom(SPOOFED, Buffer.from(`{"claims":[{"typ":"sub","val":"${SPOOFED}"}]}`).toString('base64')),
    ),
    { maxLength: 4 },
  )
  .map((pairs) => Object.fromEntries(pairs));

describe('hostile requests to every route (property test over HTTP)', () => {
  let deployment: Deployment;
  let logs: CapturedLogs;

  before(async () => {
    logs = capturingLogger('debug');
    deployment = await startDeployment({ logger: logs.logger, backchannelLogout: {} });
  });
  after(() => deployment.close());

  it('answer clearly, redirect only here or to the provider, let nothing anonymous through to a protected path, and log no credential', async () => {
    const origins = [new URL(deployment.url).origin, new URL(deployment.idp.issuer).origin];
    await fc.assert(
      fc.asyncProperty(request, async ({ method, route, query: q, headers: h, body: b }) => {
        const seen = deployment.upstream.requests.length;
        const target = `${deployment.url}${route}${q ? `?${q}` : ''}`;
        const sent = method === 'GET' || method === 'HEAD' ? undefined : b;
        const answer = await new Browser().request(target, {
          method,
          headers: h,
          ...(sent !== undefined ? { body: sent } : {}),
        });
        const what = `${method} ${route}?${q.slice(0, 200)} ${JSON.stringify(h)} ${JSON.stringify(sent)?.slice(0, 200)}`;
        expect(answer.status, `${what} → ${answer.body.slice(0, 300)}`).to.be.within(200, 499);
        if (answer.status >= 300 && answer.status < 400) {
          expect(origins, `${what} → Location ${answer.headers.location}`).to.include(
            new URL(answer.headers.location!, deployment.url).origin,
          );
        }
        for (const reached of deployment.upstream.requests.slice(seen)) {
          // Nothing sent here signs anyone in: only excluded paths reach the app, anonymously.
          expect(reached.url, what).to.match(/^\/public\//);
          expect(reached.headers['x-platform-client-principal-id'], what).to.equal(undefined);
        }
      }),
      { numRuns: 600 },
    );
    // The property was exercised on refusals and redirects alike, and every credential was dropped.
    expect(logs.lines().length).to.be.greaterThan(100);
    expect(logs.lines().filter((line) => JSON.stringify(line).includes(MARKER))).to.deep.equal([]);
  });

  it('signed in: the app gets this user’s identity and never a spoofed one, whatever else the request carries', async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    const me = JSON.parse((await browser.request(`${deployment.url}/.auth/me`)).body) as Array<{ user_id: string }>;
    const userId = me[0]!.user_id;
    const origins = [new URL(deployment.url).origin, new URL(deployment.idp.issuer).origin];
    // Signing out is left out: the session must last the whole run.
    const routes = ROUTES.filter((route) => !route.startsWith('/.auth/logout'));
    const signedInRequest = fc.record({
      method: request.map((r) => r.method),
      route: fc.constantFrom(...routes),
      query,
      spoofed: spoofedHeaders,
      body,
    });
    let reachedApp = 0;
    await fc.assert(
      fc.asyncProperty(signedInRequest, async ({ method, route, query: q, spoofed, body: b }) => {
        const seen = deployment.upstream.requests.length;
        const sent = method === 'GET' || method === 'HEAD' ? undefined : b;
        const answer = await browser.request(`${deployment.url}${route}${q ? `?${q}` : ''}`, {
          method,
          headers: spoofed,
          ...(sent !== undefined ? { body: sent } : {}),
        });
        const what = `${method} ${route}?${q.slice(0, 200)} ${JSON.stringify(spoofed)}`;
        expect(answer.status, `${what} → ${answer.body.slice(0, 300)}`).to.be.within(200, 499);
        if (answer.status >= 300 && answer.status < 400)
          expect(origins, what).to.include(new URL(answer.headers.location!, deployment.url).origin);
        for (const reached of deployment.upstream.requests.slice(seen)) {
          reachedApp++;
          expect(reached.headers['x-platform-client-principal-id'], what).to.equal(userId);
          expect(JSON.stringify(reached.headers), what).to.not.include(SPOOFED);
          expect(
            Buffer.from(String(reached.headers['x-platform-client-principal']), 'base64').toString(),
            what,
          ).to.not.include(SPOOFED);
        }
      }),
      { numRuns: 400 },
    );
    expect(reachedApp).to.be.greaterThan(20);
    // Still signed in as the same user.
    expect(
      (JSON.parse((await browser.request(`${deployment.url}/.auth/me`)).body) as Array<{ user_id: string }>)[0]!
        .user_id,
    ).to.equal(userId);
  });
});
