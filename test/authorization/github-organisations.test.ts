// GitHub's organisations and teams as groups: a rule that allows by group has
// gatehouse ask for read:org and read /user/orgs and /user/teams (every page)
// at sign-in, against the GitHub stand-in speaking GitHub's API.
import { expect } from 'chai';

import { Browser } from '../support/browser.js';
import { startGatewayDeployment, type GatewayDeployment } from '../support/sign-in.js';
import { gitHubDocument, startGitHub, OCTOCAT, type GitHubStandIn, type GitHubUser } from '../stand-ins/github.js';

const MEMBER: GitHubUser = {
  ...OCTOCAT,
  organisations: [
    { login: 'Octo-Org', public: false },
    { login: 'public-club', public: true },
  ],
  teams: [
    { organisation: 'Octo-Org', slug: 'admins', name: 'Admins' },
    { organisation: 'other-org', slug: 'everyone', name: 'Everyone' },
  ],
};

describe('authorization by GitHub organisations and teams', function () {
  this.timeout(30_000);
  let github: GitHubStandIn;
  let deployment: GatewayDeployment;

  async function start(user: GitHubUser, allow: unknown[]): Promise<void> {
    github = await startGitHub({ user });
    deployment = await startGatewayDeployment({
      prepare: async () => ({
        document: { ...gitHubDocument(github), gatehouse: { authorization: { default: { allow } } } },
        env: { GITHUB_SECRET: github.clientSecret },
      }),
    });
  }
  afterEach(async () => {
    await deployment?.close();
    await github?.close();
  });

  /** Signs in at `path` (the stand-in approves at once); the last answer. */
  async function signedInAt(path: string) {
    const browser = new Browser();
    const hops = await browser.follow(`${deployment.url}${path}`);
    return { browser, hops, last: hops.at(-1)! };
  }

  it('asks for read:org, and lets in a member of the team (organisation/team, in lower case)', async () => {
    await start(MEMBER, [{ groups: ['octo-org/admins'] }]);
    const { browser, hops, last } = await signedInAt('/deploy');
    const scopes = new URL(hops[1]!.headers.location!).searchParams.get('scope')!.split(' ');
    expect(scopes).to.include.members(['read:user', 'user:email', 'read:org']);
    expect(last.status).to.equal(200);
    const me = JSON.parse((await browser.request(`${deployment.url}/.auth/me`)).body) as Array<Record<string, unknown>>;
    expect(me[0]!.user_groups).to.deep.equal(['octo-org', 'public-club', 'octo-org/admins', 'other-org/everyone']);
  });

  it('an organisation, a private membership included; not a team of another organisation of the same name', async () => {
    await start(MEMBER, [{ provider: 'github', groups: ['octo-org'] }]);
    expect((await signedInAt('/')).last.status).to.equal(200);
    await deployment.close();
    await github.close();
    await start(MEMBER, [{ groups: ['other-org/admins', 'everyone'] }]);
    const { last } = await signedInAt('/');
    expect(last.status).to.equal(403);
    expect(last.body).to.include('You are signed in as octocat (GitHub)');
  });

  it('reads every page: a membership on the second page counts', async () => {
    const organisations = Array.from({ length: 150 }, (_, i) => ({ login: `org-${i}`, public: false }));
    await start({ ...MEMBER, organisations, teams: [] }, [{ groups: ['org-149'] }]);
    expect((await signedInAt('/')).last.status).to.equal(200);
  });

  it('a user in no organisation is refused', async () => {
    await start({ ...OCTOCAT }, [{ groups: ['octo-org'] }]);
    expect((await signedInAt('/')).last.status).to.equal(403);
  });

  it('without a group rule, no organisation is looked up and read:org is not asked for', async () => {
    await start(MEMBER, [{ emailDomains: ['github.example'] }]);
    const { hops, last } = await signedInAt('/');
    expect(new URL(hops[1]!.headers.location!).searchParams.get('scope')).to.equal('read:user user:email');
    expect(last.status).to.equal(200);
  });
});
