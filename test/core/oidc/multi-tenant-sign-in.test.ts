// A multi-tenant directory (`/common/v2.0`, whose issuer is the tenant
// template) against a real oidc-provider: the ID token of a sign-in is checked
// with the issuer of its own tenant, among the allowed ones, and the
// callback's `iss` must be that issuer.
import type { ServerResponse } from 'node:http';

import { expect } from 'chai';

import type { RunningIdentityProvider } from '../../../src/dev/identity-provider.js';
import { Browser, type Response } from '../../support/browser.js';
import { member, startDirectory as startDirectoryProvider, TENANT } from '../../support/directory-provider.js';
import { forwarded } from '../../support/principal.js';
import { startGatewayDeployment, type GatewayDeployment } from '../../support/sign-in.js';

const OTHER_TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';
const DEMO = { username: 'demo', password: 'demo' };

interface DirectoryOptions {
  readonly allowedTenants?: readonly string[];
  /** Rewrites the provider's redirect to gatehouse's callback (what a mix-up attack would send). */
  readonly callback?: (location: URL, issuer: string) => void;
}

/** The provider's own answers, with the redirect to the callback passed through `rewrite`. */
function rewritingCallback(res: ServerResponse, rewrite: (location: URL) => void): void {
  const setHeader = res.setHeader.bind(res);
  res.setHeader = (name, value) => {
    if (name.toLowerCase() === 'location' && String(value).includes('/.auth/login/aad/callback')) {
      const location = new URL(String(value));
      rewrite(location);
      return setHeader(name, location.href);
    }
    return setHeader(name, value);
  };
}

describe('a multi-tenant directory sign-in (a real oidc-provider)', function () {
  this.timeout(30_000);
  let idp: RunningIdentityProvider | undefined;
  let deployment: GatewayDeployment | undefined;
  afterEach(async () => {
    await deployment?.close();
    await idp?.close();
    deployment = undefined;
    idp = undefined;
  });

  async function startDirectory(options: DirectoryOptions = {}): Promise<GatewayDeployment> {
    deployment = await startGatewayDeployment({
      prepare: async (front) => {
        const rewrite = options.callback;
        const directory = await startDirectoryProvider({
          front,
          multiTenant: true,
          users: {
            demo: member('demo', '00000000-0000-0000-0000-0000000000aa', { preferred_username: 'alice' }),
          },
          intercept: (_req, res, issuer) => {
            if (rewrite !== undefined) rewritingCallback(res, (location) => rewrite(location, issuer));
            return false;
          },
        });
        idp = directory.idp;
        const validation = options.allowedTenants ? { validation: { allowedTenants: options.allowedTenants } } : {};
        return {
          document: {
            identityProviders: directory.identityProviders(validation),
          },
          env: directory.env,
        };
      },
    });
    return deployment;
  }

  async function signIn(browser: Browser, url: string): Promise<Response[]> {
    const hops = await browser.follow(url);
    return browser.submitForm(hops.at(-1)!, /\/login$/, DEMO);
  }

  async function expectNotSignedIn(browser: Browser, hops: Response[]): Promise<void> {
    const final = hops.at(-1)!;
    expect(final.url).to.include('/.auth/login/aad/callback');
    expect(final.status, final.body).to.equal(401);
    expect(final.body).to.include('could not be verified');
    browser.accept = 'application/json';
    expect((await browser.request(`${deployment!.url}/.auth/me`)).status).to.equal(401);
  }

  it('a tenant among allowedTenants signs in, its callback naming its own issuer', async () => {
    let callbackIssuer: string | null = null;
    await startDirectory({
      allowedTenants: [OTHER_TENANT, TENANT],
      callback: (location) => {
        callbackIssuer = location.searchParams.get('iss');
      },
    });
    const browser = new Browser();
    const final = (await signIn(browser, `${deployment!.url}/mail`)).at(-1)!;
    expect(final.status, final.body).to.equal(200);
    expect(forwarded(final.body).headers['x-platform-client-principal-id']).to.equal(
      '00000000-0000-0000-0000-0000000000aa',
    );
    expect(callbackIssuer).to.equal(idp!.issuer);
  });

  it('a tenant outside allowedTenants is refused at the callback: no session', async () => {
    await startDirectory({ allowedTenants: [OTHER_TENANT] });
    const browser = new Browser();
    await expectNotSignedIn(browser, await signIn(browser, `${deployment!.url}/mail`));
    expect(idp!.grants.get('authorization_code')).to.equal(1);
  });

  it("a callback naming another issuer than the ID token's is refused (RFC 9207), and one naming none", async () => {
    for (const rewrite of [
      (location: URL, issuer: string) => location.searchParams.set('iss', issuer.replace(TENANT, OTHER_TENANT)),
      (location: URL) => location.searchParams.delete('iss'),
    ]) {
      await startDirectory({ callback: rewrite });
      const browser = new Browser();
      await expectNotSignedIn(browser, await signIn(browser, `${deployment!.url}/mail`));
      await deployment!.close();
      await idp!.close();
      deployment = undefined;
      idp = undefined;
    }
  });
});
