// login.nonce.validateNonce: false (docs/configuration.md): the ID token's nonce is not checked,
// whether or not the provider echoes the one gatehouse sent (a real oidc-provider echoes it, which
// openid-client alone would refuse); every other check of the ID token and the callback still holds.
import type http from 'node:http';

import { expect } from 'chai';
import { decodeJwt } from 'jose';

import { Browser } from '../../support/browser.js';
import { defaultDocument, signIn, startDeployment, type Deployment } from '../../support/sign-in.js';
import { bodyOf, isTokenCall, passToProvider } from '../../support/token-endpoint.js';

/** Changes the provider's ID token before gatehouse reads it (undefined: passed as it is). */
type IdTokenEdit = (idToken: string) => string | undefined;

describe('a sign-in with the nonce not validated (a real oidc-provider)', function () {
  this.timeout(30_000);
  let deployment: Deployment;
  let edit: IdTokenEdit | undefined;
  let lastIdToken: string | undefined;

  function intercept(req: http.IncomingMessage, res: http.ServerResponse, issuer: string): boolean {
    if (!isTokenCall(req)) return false;
    void (async () => {
      const real = await passToProvider(issuer, req, await bodyOf(req));
      const json = (await real.json()) as Record<string, unknown>;
      lastIdToken = json.id_token as string | undefined;
      if (edit !== undefined && typeof json.id_token === 'string') {
        const edited = edit(json.id_token);
        if (edited === undefined) delete json.id_token;
        else json.id_token = edited;
      }
      res.writeHead(real.status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    })().catch((error: unknown) => res.writeHead(599).end(String(error)));
    return true;
  }

  before(async () => {
    deployment = await startDeployment({
      document: (issuer) => ({ ...defaultDocument(issuer), login: { nonce: { validateNonce: false } } }),
      interceptProvider: (req, res) => intercept(req, res, deployment.idp.issuer),
    });
  });
  after(() => deployment.close());
  afterEach(() => {
    edit = undefined;
  });

  it('signs in, the provider echoing the nonce', async () => {
    const browser = new Browser();
    const { final } = await signIn(browser, deployment);
    expect(final.status, final.body).to.equal(200);
    expect(decodeJwt(lastIdToken!).nonce).to.be.a('string');
    expect(browser.cookie(deployment.url, 'PlatformAuthSession')).not.to.equal(undefined);
  });

  const tampered: ReadonlyArray<[string, IdTokenEdit]> = [
    ['no ID token', () => undefined],
    ['a signature altered', (token) => `${token.slice(0, -4)}${token.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`],
    [
      'claims altered under the same signature',
      (token) => {
        const [header, , signature] = token.split('.');
        const claims = { ...decodeJwt(token), sub: 'someone-else' };
        return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
      },
    ],
    [
      'alg none',
      (token) => {
        const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
        return `${header}.${token.split('.')[1]}.`;
      },
    ],
  ];

  for (const [name, change] of tampered) {
    it(`refuses an ID token with ${name}: no session`, async () => {
      edit = change;
      const browser = new Browser();
      const { final } = await signIn(browser, deployment);
      expect(final.status, final.body).to.equal(401);
      expect(final.body).to.include('could not be verified');
      expect(browser.cookie(deployment.url, 'PlatformAuthSession')).to.equal(undefined);
    });
  }
});
