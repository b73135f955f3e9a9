// The tenant template of a multi-tenant directory: the metadata it must come
// with, the issuer a token of a tenant must carry, and which issuers fit it.
import { expect } from 'chai';

import { ProviderUnavailableError } from '../../../src/core/providers/errors.js';
import { checkTenantTemplate, fitsTenantTemplate, tenantIssuer } from '../../../src/core/oidc/tenant-issuer.js';

const TEMPLATE = 'https://login.example/{tenantid}/v2.0';
const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const DISCOVERY = 'https://login.example/common/v2.0/.well-known/openid-configuration';
const ENDPOINTS = {
  authorization_endpoint: 'https://login.example/common/oauth2/v2.0/authorize',
  token_endpoint: 'https://login.example/common/oauth2/v2.0/token',
  jwks_uri: 'https://login.example/common/discovery/v2.0/keys',
};

describe('the tenant template of a multi-tenant directory', () => {
  it('is accepted on the origin it was discovered from, with its endpoints', () => {
    expect(() => checkTenantTemplate({ issuer: TEMPLATE, ...ENDPOINTS }, DISCOVERY)).not.to.throw();
  });

  it('refuses an issuer that is no template, a template on another origin, a missing endpoint', () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [
        { issuer: `https://login.example/${TENANT}/v2.0`, ...ENDPOINTS },
        /is not a tenant template on https:\/\/login.example/,
      ],
      [{ issuer: 'https://attacker.example/{tenantid}/v2.0', ...ENDPOINTS }, /is not a tenant template/],
      [{ issuer: TEMPLATE, ...ENDPOINTS, token_endpoint: '' }, /answer has no token_endpoint/],
      [{ issuer: TEMPLATE, authorization_endpoint: ENDPOINTS.authorization_endpoint }, /answer has no token_endpoint/],
    ];
    for (const [metadata, message] of cases) {
      expect(() => checkTenantTemplate(metadata, DISCOVERY))
        .to.throw(ProviderUnavailableError)
        .with.property('message')
        .that.matches(message);
    }
  });

  it("a token's issuer is the template filled with its own tid, when the tenant is well-formed and allowed", () => {
    expect(tenantIssuer(TEMPLATE, { tid: TENANT }, [])).to.equal(`https://login.example/${TENANT}/v2.0`);
    expect(tenantIssuer(TEMPLATE, { tid: TENANT }, ['other', TENANT])).to.equal(`https://login.example/${TENANT}/v2.0`);
    expect(tenantIssuer(TEMPLATE, { tid: TENANT }, ['other'])).to.equal(undefined);
    // A GUID in either case names one tenant; the issuer is filled with the token's own spelling.
    expect(tenantIssuer(TEMPLATE, { tid: TENANT }, [TENANT.toUpperCase()])).to.equal(
      `https://login.example/${TENANT}/v2.0`,
    );
    expect(tenantIssuer(TEMPLATE, { tid: TENANT.toUpperCase() }, [TENANT])).to.equal(
      `https://login.example/${TENANT.toUpperCase()}/v2.0`,
    );
    expect(tenantIssuer(TEMPLATE, { tid: TENANT }, [TENANT.slice(1)])).to.equal(undefined);
    for (const tid of [undefined, 42, '', 'a/b', '../x', 'a'.repeat(65), 'tenant?x'])
      expect(tenantIssuer(TEMPLATE, { tid }, []), String(tid)).to.equal(undefined);
  });

  it('an issuer fits the template only with a tenant in its place', () => {
    expect(fitsTenantTemplate(TEMPLATE, `https://login.example/${TENANT}/v2.0`)).to.equal(true);
    expect(fitsTenantTemplate(TEMPLATE, 'https://login.example//v2.0')).to.equal(false);
    expect(fitsTenantTemplate(TEMPLATE, `https://login.example/${TENANT}/v1.0`)).to.equal(false);
    expect(fitsTenantTemplate(TEMPLATE, `https://other.example/${TENANT}/v2.0`)).to.equal(false);
  });
});
