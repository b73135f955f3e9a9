// The property every OAuth provider's profile call must hold (GitHub's /user, Facebook's /me,
// Twitter's verify_credentials): whatever JSON the provider answers with, a browser's sign-in
// ends in a clear answer (never a 500), and a session it makes serves pages with a numeric -ID
// and a -NAME. The stand-in answers the profile call with each generated value in turn.
import { expect } from 'chai';
import fc from 'fast-check';

import { Browser, type Response } from './browser.js';
import { forwarded } from './principal.js';
import type { GatewayDeployment } from './sign-in.js';

/** JSON values of every kind, and the ones that have broken providers' parsing: ids of the wrong type, control characters, long text. */
export const oddJson = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    null,
    '',
    0,
    -1,
    1.5,
    2 ** 53 + 2,
    '583231',
    '1e21',
    ' 42',
    'octo\r\ncat',
    'octo\u0001cat',
    'ä',
    'x'.repeat(3000),
  ),
);

/** Mostly `usual`, now and then anything. */
export function mostly<T>(usual: T): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: fc.constant(usual), weight: 3 }, { arbitrary: oddJson, weight: 1 });
}

/**
 * A browser's sign-in through `deployment` while the stand-in answers the profile call with `answer`
 * (`serve` makes it do so; `serve(undefined)` restores the user's own profile): the last answer, and
 * whether a session was made.
 */
async function signInWith<T>(
  deployment: GatewayDeployment,
  answer: T,
  serve: (answer: T | undefined) => void,
): Promise<{ last: Response; signedIn: boolean; what: string }> {
  serve(answer);
  const browser = new Browser();
  let hops;
  try {
    hops = await browser.follow(`${deployment.url}/`);
  } finally {
    serve(undefined);
  }
  const last = hops.at(-1)!;
  const what = `${JSON.stringify(answer).slice(0, 300)} → ${last.status} ${last.body.slice(0, 200)}`;
  return { last, signedIn: browser.cookie(deployment.url, 'PlatformAuthSession') !== undefined, what };
}

/** Each answer is none the provider sends: its sign-in ends in a 502 page, and nobody is signed in. */
export async function assertEachRefused<T>(
  deployment: GatewayDeployment,
  answers: readonly T[],
  serve: (answer: T | undefined) => void,
): Promise<void> {
  for (const answer of answers) {
    const { last, signedIn, what } = await signInWith(deployment, answer, serve);
    expect(last.status, what).to.equal(502);
    expect(signedIn, what).to.equal(false);
  }
}

/**
 * Signs in through `deployment` once per generated answer (see signInWith). Returns how many
 * sign-ins made a session.
 */
export async function assertAnyProfileEndsClearly<T>(
  deployment: GatewayDeployment,
  answers: fc.Arbitrary<T>,
  serve: (answer: T | undefined) => void,
  numRuns: number,
): Promise<number> {
  let signedIn = 0;
  await fc.assert(
    fc.asyncProperty(answers, async (answer) => {
      const { last, signedIn: made, what } = await signInWith(deployment, answer, serve);
      if (!made) {
        expect(last.status, what).to.be.within(400, 599);
        expect(last.status, what).to.not.equal(500);
        return;
      }
      signedIn++;
      expect(last.status, what).to.equal(200);
      const headers = forwarded(last.body).headers;
      expect(headers['x-platform-client-principal-id'], what).to.match(/^[1-9][0-9]*$/);
      expect(headers['x-platform-client-principal-name'], what).to.be.a('string').and.not.equal('');
    }),
    { numRuns },
  );
  return signedIn;
}
