// A provider is trusted to sign ID tokens, not to answer well: property tests where the token
// endpoint of a real provider answers a real sign-in with generated responses (garbage, errors,
// or its own genuine answer with its other fields made strange). gatehouse must answer each
// sign-in clearly, never with a 500, and never sign anyone in without a valid ID token; a session
// it did create must never fail later: its pages are served or ask to sign in again, and
// /.auth/me and /.auth/refresh answer.
import type http from 'node:http';

import { expect } from 'chai';
import fc from 'fast-check';

import { Browser } from '../support/browser.js';
import { signIn, startDeployment, type Deployment } from '../support/sign-in.js';
import { bodyOf, isTokenCall, passToProvider } from '../support/token-endpoint.js';

type TokenAnswer =
  | {
      readonly kind: 'made-up';
      readonly status: number;
      readonly contentType: string | undefined;
      readonly body: string;
    }
  | { readonly kind: 'genuine'; readonly changes: Record<string, unknown>; readonly removed: readonly string[] };

const strange = fc.oneof(
  fc.constantFrom(
    null,
    true,
    0,
    -1,
    1e308,
    -1e308,
    2 ** 53 + 1,
    '',
    ' ',
    '3600',
    '1e9',
    'NaN',
    [],
    {},
    { a: 1 },
    'x'.repeat(5000),
    'line\r\nbreak',
    '\u0000',
  ),
  fc.jsonValue({ maxDepth: 2 }),
);
const answer: fc.Arbitrary<TokenAnswer> = fc.oneof(
  { arbitrary: madeUp(), weight: 1 },
  { arbitrary: genuine(), weight: 2 },
);

function madeUp(): fc.Arbitrary<TokenAnswer> {
  return fc.record({
    kind: fc.constant('made-up' as const),
    status: fc.constantFrom(200, 200, 400, 401, 403, 429, 500, 503),
    contentType: fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/html',
      'text/plain',
      undefined,
    ),
    body: fc.oneof(
      fc.string({ maxLength: 50 }),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      fc
        .record(
          {
            access_token: strange,
            token_type: strange,
            id_token: fc.oneof(strange, fc.constantFrom('a.b.c', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.')),
            expires_in: strange,
            error: strange,
          },
          { requiredKeys: [] },
        )
        .map((v) => JSON.stringify(v)),
    ),
  });
}

/** A field of the provider's answer set to an odd value of its own type (4 in 5) or to anything. */
function field(name: string, odd: fc.Arbitrary<unknown>): fc.Arbitrary<[string, unknown]> {
  return fc.tuple(fc.constant(name), fc.oneof({ arbitrary: odd, weight: 4 }, { arbitrary: strange, weight: 1 }));
}

function genuine(): fc.Arbitrary<TokenAnswer> {
  return fc.record({
    kind: fc.constant('genuine' as const),
    // One or two fields changed, mostly to values of the right type but odd (which a client
    // library lets through), now and then to one of any type.
    changes: fc
      .array(
        fc.oneof(
          field(
            'access_token',
            fc.constantFrom(
              'x'.repeat(6000),
              'a b',
              'ä',
              'line\r\nbreak',
              '\u0000',
              '\u0001',
              '\u007f',
              '\t',
              '"quoted"',
            ),
          ),
          field('token_type', fc.constantFrom('bearer', 'BEARER')),
          field('expires_in', fc.constantFrom(0, 1, 59, 2 ** 31, 1e12, 1e308, 0.5)),
          field('refresh_token', fc.constantFrom('x'.repeat(6000), 'line\r\nbreak', '\u0001')),
          field('scope', fc.constantFrom('', 'openid', 'a\u0000b')),
          fc.tuple(fc.constant('extra'), strange),
        ),
        { maxLength: 2 },
      )
      .map((pairs) => Object.fromEntries(pairs)),
    // Mostly what a provider may leave out; now and then what it must not.
    removed: fc.oneof(
      { arbitrary: fc.subarray(['expires_in', 'refresh_token', 'scope']), weight: 4 },
      { arbitrary: fc.subarray(['access_token', 'token_type']), weight: 1 },
    ),
  });
}

describe('a provider that answers strangely (property test over HTTP)', function () {
  this.timeout(120_000);
  let deployment: Deployment;
  let next: TokenAnswer | undefined;

  /** The provider's token endpoint, as the property has it answer. */
  function intercept(req: http.IncomingMessage, res: http.ServerResponse, issuer: string): boolean {
    if (!isTokenCall(req) || next === undefined) return false;
    const planned = next;
    void (async () => {
      const body = await bodyOf(req);
      if (planned.kind === 'made-up') {
        res
          .writeHead(planned.status, planned.contentType ? { 'content-type': planned.contentType } : {})
          .end(planned.body);
        return;
      }
      const real = await passToProvider(issuer, req, body);
      const json = (await real.json()) as Record<string, unknown>;
      for (const name of planned.removed) delete json[name];
      res
        .writeHead(real.status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ...json, ...planned.changes }));
    })().catch((error: unknown) => res.writeHead(599).end(String(error)));
    return true;
  }

  before(async () => {
    deployment = await startDeployment({ interceptProvider: (req, res) => intercept(req, res, deployment.idp.issuer) });
  });
  after(() => deployment.close());

  it('every sign-in ends in a clear answer; one that succeeds is a session that works', async () => {
    let signedIn = 0;
    let refused = 0;
    let served = 0;
    await fc.assert(
      fc.asyncProperty(answer, async (planned) => {
        next = planned;
        const browser = new Browser();
        const { final } = await signIn(browser, deployment);
        next = undefined;
        const what = `${JSON.stringify(planned).slice(0, 400)} → ${final.status} ${final.body.slice(0, 300)}`;
        expect(final.status, what).to.not.equal(500);
        const session = browser.cookie(deployment.url, 'PlatformAuthSession');
        if (planned.kind === 'made-up') expect(session, what).to.equal(undefined); // no valid ID token: nobody signed in
        if (session === undefined) {
          refused++;
          expect(final.status, what).to.be.within(400, 599);
          return;
        }
        signedIn++;
        // Served, or (an access token already expired whose refresh the provider refuses) asked to sign in again: never an error.
        for (const path of ['/protected', '/.auth/me', '/protected']) {
          const page = await browser.request(`${deployment.url}${path}`);
          expect(
            [200, path === '/protected' ? 302 : 401],
            `${what} then ${path} → ${page.status} ${page.body.slice(0, 300)}`,
          ).to.include(page.status);
          if (page.status === 200) served++;
        }
        const refreshed = await browser.request(`${deployment.url}/.auth/refresh`);
        expect([200, 401], `${what} then refresh → ${refreshed.status} ${refreshed.body.slice(0, 300)}`).to.include(
          refreshed.status,
        );
        expect(
          (await browser.request(`${deployment.url}/.auth/me`)).status,
          `${what} then /.auth/me after refresh`,
        ).to.be.oneOf([200, 401]);
      }),
      { numRuns: 60 },
    );
    // Both outcomes were exercised.
    expect(signedIn, 'signed in').to.be.greaterThan(5);
    expect(refused, 'refused').to.be.greaterThan(5);
    expect(served, 'served').to.be.greaterThan(10);
  });

  it('a refresh whose answer holds a value no header can carry fails like a refused one: the session is not given tokens that would break every request', async () => {
    for (const changes of [{ access_token: 'a\u0001b' }, { refresh_token: 'line\r\nbreak' }]) {
      const browser = new Browser();
      await signIn(browser, deployment);
      expect((await browser.request(`${deployment.url}/protected`)).status).to.equal(200);
      next = { kind: 'genuine', changes, removed: [] };
      const refreshed = await browser.request(`${deployment.url}/.auth/refresh`, {
        headers: { accept: 'application/json' },
      });
      next = undefined;
      expect(refreshed.status, JSON.stringify(changes)).to.equal(401);
      // Asked to sign in again, as after any refused refresh; never a 500 or 502.
      expect((await browser.request(`${deployment.url}/protected`)).status, JSON.stringify(changes)).to.equal(302);
    }
  });
});
