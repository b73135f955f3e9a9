// GitHub sign-in through gatehouse against the GitHub stand-in (real HTTP,
// GitHub's documented protocol).
import { expect } from 'chai';
import fc from 'fast-check';

import { Browser } from '../../support/browser.js';
import { forwarded, principal } from '../../support/principal.js';
import { assertAnyProfileEndsClearly, assertEachRefused, mostly, oddJson } from '../../support/profile-property.js';
import { startGatewayDeployment, type GatewayDeployment } from '../../support/sign-in.js';
import { gitHubDocument, startGitHub, OCTOCAT, type GitHubStandIn } from '../../stand-ins/github.js';

describe('github provider', () => {
  let github: GitHubStandIn;
  let deployment: GatewayDeployment;

  beforeEach(async () => {
    github = await startGitHub();
    deployment = await startGatewayDeployment({
      prepare: async () => ({ document: gitHubDocument(github), env: { GITHUB_SECRET: github.clientSecret } }),
    });
  });
  afterEach(async () => {
    await deployment.close();
    await github.close();
  });

  it('signs in: -ID is the numeric id, -NAME the login, the e-mail the primary verified address, the token a header', async () => {
    const browser = new Browser();
    const hops = await browser.follow(`${deployment.url}/repos?tab=stars`);
    expect(hops.map((h) => h.status)).to.deep.equal([302, 302, 302, 302, 200]);
    expect(new URL(hops[1]!.headers.location!).pathname).to.equal('/login/oauth/authorize');
    const final = forwarded(hops.at(-1)!.body);
    expect(final.url).to.equal('/repos?tab=stars');
    expect(final.headers['x-platform-client-principal-id']).to.equal(String(OCTOCAT.id));
    expect(final.headers['x-platform-client-principal-name']).to.equal('octocat');
    expect(final.headers['x-platform-client-principal-idp']).to.equal('github');
    expect(final.headers['x-platform-token-github-access-token']).to.match(/^gho_/);
    expect(final.headers).to.not.have.property('x-platform-token-github-refresh-token');
    const p = principal(final.headers);
    expect(p).to.include({ auth_typ: 'github', name_typ: 'login' });
    expect(p.claims).to.deep.include({ typ: 'email', val: 'octocat@github.example' });
    expect(p.claims).to.deep.include({ typ: 'id', val: '583231' });
  });

  it('asks the token endpoint for JSON, with PKCE, and calls the API with a User-Agent', async () => {
    await new Browser().follow(`${deployment.url}/`);
    const tokenCall = github.seen.find((r) => r.url === '/login/oauth/access_token')!;
    expect(tokenCall.headers.accept).to.equal('application/json');
    expect(new URLSearchParams(tokenCall.body).get('code_verifier')).to.match(/^[A-Za-z0-9_-]{43,}$/);
    const authorize = new URL(github.seen.find((r) => r.url.startsWith('/login/oauth/authorize'))!.url, github.url);
    expect(authorize.searchParams.get('code_challenge_method')).to.equal('S256');
    expect(authorize.searchParams.get('scope')).to.equal('read:user user:email');
    for (const call of github.seen.filter((r) => r.url.startsWith('/api/v3/')))
      expect(call.headers['user-agent']).to.be.a('string').and.not.equal('');
  });

  it('a denied authorization ends in a 401 page, not a loop and not a 500', async () => {
    github.nextAuthorization = 'deny';
    const hops = await new Browser().follow(`${deployment.url}/`);
    const last = hops.at(-1)!;
    expect(last.status).to.equal(401);
    expect(last.body).to.contain('access_denied');
    expect(hops.length).to.be.below(6);
  });

  it('a code GitHub does not know (200 {"error": "bad_verification_code"}) is a 401 page', async () => {
    const browser = new Browser();
    const first = await browser.request(`${deployment.url}/.auth/login/github`);
    const authorize = await browser.request(first.headers.location!);
    const callback = new URL(authorize.headers.location!);
    callback.searchParams.set('code', 'not-a-real-code');
    const answer = await browser.request(callback.href);
    expect(answer.status).to.equal(401);
    expect(answer.body).to.contain('could not be verified');
  });

  it('GitHub down: 502 with a clear page, and the sidecar keeps serving', async () => {
    const browser = new Browser();
    const first = await browser.request(`${deployment.url}/.auth/login/github`);
    const authorize = await browser.request(first.headers.location!);
    await github.close();
    const answer = await browser.request(authorize.headers.location!);
    expect(answer.status).to.equal(502);
    expect(answer.body).to.contain('could not be reached');
    // At the callback too: the link starts a new sign-in (to where this one was going, /.auth/login/done by default).
    expect(answer.body).to.contain('<a href="/.auth/login/github">Try again</a>');
    expect((await new Browser().request(`${deployment.url}/.auth/version`)).status).to.equal(200);
  });

  it('a token endpoint answering an HTML error page is a 502 page, logged, never a 500', async () => {
    github.tokenEndpoint = 'broken';
    const hops = await new Browser().follow(`${deployment.url}/`);
    expect(hops.at(-1)!.status).to.equal(502);
    expect(hops.at(-1)!.headers['content-type']).to.match(/^text\/html/);
    expect(hops.at(-1)!.body).to.not.match(/at .*\.ts:\d+/);
  });

  it('no refresh token: /.auth/refresh says so with a 401', async () => {
    const browser = new Browser();
    await browser.follow(`${deployment.url}/`);
    browser.accept = 'application/json';
    const refreshed = await browser.request(`${deployment.url}/.auth/refresh`);
    expect(refreshed.status).to.equal(401);
    expect(JSON.parse(refreshed.body).error).to.contain('no refresh token');
  });
});

describe('github provider: a profile of any shape (property test over HTTP)', function () {
  this.timeout(120_000);
  let github: GitHubStandIn;
  let deployment: GatewayDeployment;
  before(async () => {
    github = await startGitHub();
    deployment = await startGatewayDeployment({
      prepare: async () => ({ document: gitHubDocument(github), env: { GITHUB_SECRET: github.clientSecret } }),
    });
  });
  after(async () => {
    await deployment.close();
    await github.close();
  });

  const profile = fc.oneof(
    // Mostly a profile with GitHub's own id and login, and anything beside them; now and then those are odd too.
    {
      arbitrary: fc.record({ id: mostly(583231), login: mostly('octocat'), name: oddJson, email: oddJson }),
      weight: 4,
    },
    { arbitrary: oddJson, weight: 1 },
  );
  const emails = fc.oneof(
    {
      arbitrary: fc.array(
        fc.record(
          {
            email: mostly('o@c.example'),
            primary: fc.oneof(fc.boolean(), oddJson),
            verified: fc.oneof(fc.boolean(), oddJson),
            visibility: oddJson,
          },
          { requiredKeys: [] },
        ),
        { maxLength: 3 },
      ),
      weight: 3,
    },
    { arbitrary: oddJson, weight: 1 },
  );

  it('an id that is not a positive integer (0, -1, 1.5, "583231") is no GitHub answer: a 502 page, nobody signed in', async () => {
    const answers = [0, -1, 1.5, '583231'].map((id) => ({ user: { id, login: 'octocat' } }));
    await assertEachRefused(deployment, answers, (answer) => (github.profileAnswers = answer));
  });

  it('a sign-in ends in a clear answer, never a 500; a session it makes serves pages with the numeric id and the login', async () => {
    const answers = fc.record({ user: profile, emails });
    const signedIn = await assertAnyProfileEndsClearly(
      deployment,
      answers,
      (answer) => (github.profileAnswers = answer),
      80,
    );
    expect(signedIn).to.be.greaterThan(10);
  });
});
