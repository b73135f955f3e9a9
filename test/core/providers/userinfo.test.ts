// Claims from the userinfo endpoint: a provider that keeps its ID tokens thin
// (Okta's default, oidc-provider's conforming mode) sends name, email and roles
// only there. gatehouse adds them to the identity after the code exchange (the
// ID token wins on conflicts); a userinfo `sub` other than the ID token's fails
// the sign-in (OpenID Connect Core §5.3.2); `login.claimsFromUserInfo: false`
// turns it off.
import { expect } from 'chai';

import { Browser } from '../../support/browser.js';
import { forwarded, principal } from '../../support/principal.js';
import { defaultDocument, signIn, startDeployment, type Deployment } from '../../support/sign-in.js';

/** The dev provider's document, with the "dev" provider's login block changed. */
function withLogin(login: Record<string, unknown>) {
  return (issuer: string): Record<string, unknown> => {
    const document = defaultDocument(issuer) as {
      identityProviders: { customOpenIdConnectProviders: { dev: { login: Record<string, unknown> } } };
    };
    const dev = document.identityProviders.customOpenIdConnectProviders.dev;
    dev.login = { ...dev.login, ...login };
    return document;
  };
}

async function signedInHeaders(deployment: Deployment): Promise<Record<string, string>> {
  const browser = new Browser();
  const { final } = await signIn(browser, deployment, '/page');
  expect(final.status, final.body.slice(0, 300)).to.equal(200);
  return forwarded(final.body).headers;
}

describe('claims from the userinfo endpoint (a provider with thin ID tokens)', function () {
  this.timeout(30_000);
  const deployments: Deployment[] = [];
  after(() => Promise.all(deployments.map((deployment) => deployment.close())));
  const start = async (options: Parameters<typeof startDeployment>[0]) => {
    const deployment = await startDeployment(options);
    deployments.push(deployment);
    return deployment;
  };

  it('the userinfo claims join the identity: -NAME from the name claim, email and roles among the claims', async () => {
    const deployment = await start({ thinIdToken: true });
    const headers = await signedInHeaders(deployment);
    expect(headers['x-platform-client-principal-name']).to.equal('Dev User');
    const claims = principal(headers).claims;
    expect(claims).to.deep.include({ typ: 'email', val: 'demo@example.com' });
    expect(claims.filter((c) => c.typ === 'roles').map((c) => c.val)).to.have.members(['admin', 'reader']);
  });

  it('login.claimsFromUserInfo: false leaves the thin ID token alone: no name, so -NAME falls back to the subject', async () => {
    const deployment = await start({ thinIdToken: true, document: withLogin({ claimsFromUserInfo: false }) });
    const headers = await signedInHeaders(deployment);
    expect(headers['x-platform-client-principal-name']).to.equal(headers['x-platform-client-principal-id']);
    expect(principal(headers).claims.map((c) => c.typ)).not.to.include('email');
  });

  it('a userinfo answer about another subject fails the sign-in, and nobody is signed in', async () => {
    const deployment = await start({
      thinIdToken: true,
      interceptProvider: (req, res) => {
        if (!req.url?.startsWith('/me')) return false;
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ sub: 'someone-else', name: 'Mallory' }));
        return true;
      },
    });
    const browser = new Browser();
    const { final } = await signIn(browser, deployment, '/page');
    expect(final.status).to.be.within(400, 599);
    expect(final.status).not.to.equal(500);
    expect(browser.cookie(deployment.url, 'PlatformAuthSession')).to.equal(undefined);
    expect(final.body).not.to.include('Mallory');
  });
});
