// claimSources.<directory>.graph in the configuration document: its defaults,
// and the start errors for a provider other than the directory or a bad endpoint.
import { expect } from 'chai';

import { AuthConfigError, resolveAuthConfig } from '../../../src/core/config/auth-config.js';
import type { OidcProviderConfig } from '../../../src/core/config/provider-settings.js';

const directory = {
  registration: {
    openIdIssuer: 'https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0',
    clientId: 'app',
  },
};
const corp = {
  registration: {
    clientId: 'app',
    openIdConnectConfiguration: {
      wellKnownOpenIdConfiguration: 'https://idp.example/.well-known/openid-configuration',
    },
  },
};

function document(claimSources: unknown): Record<string, unknown> {
  return {
    identityProviders: { azureActiveDirectory: directory, customOpenIdConnectProviders: { corp } },
    gatehouse: { authorization: { claimSources } },
  };
}

function problems(doc: unknown): string[] {
  try {
    resolveAuthConfig(doc, {});
  } catch (error) {
    expect(error).to.be.instanceOf(AuthConfigError);
    return [...(error as AuthConfigError).problems];
  }
  return expect.fail('expected a configuration error');
}

describe('claimSources.<directory>.graph configuration', () => {
  it('{} looks up in Graph’s global cloud, 10 pages at most; a national cloud and a page limit can be given', () => {
    const sources = (graph: unknown, key = 'azureActiveDirectory') =>
      (resolveAuthConfig(document({ [key]: { graph } }), {}).config.providers.get('aad') as OidcProviderConfig)
        .claimSources;
    expect(sources({})).to.deep.equal({
      groups: 'groups',
      roles: 'roles',
      graph: { endpoint: 'https://graph.microsoft.com', maxPages: 10 },
    });
    expect(sources({ endpoint: 'https://graph.microsoft.us', maxPages: 3 }, 'aad')!.graph).to.deep.equal({
      endpoint: 'https://graph.microsoft.us',
      maxPages: 3,
    });
    const unset = resolveAuthConfig(document({ aad: { roles: 'roles' } }), {}).config.providers.get('aad');
    expect((unset as OidcProviderConfig).claimSources).to.not.have.property('graph');
  });

  it('is for the directory only, with an origin for endpoint and 1 to 100 pages', () => {
    expect(problems(document({ corp: { graph: {} } }))).to.deep.equal([
      "gatehouse.authorization.claimSources.corp.graph: only Microsoft's directory (azureActiveDirectory) refers to Microsoft Graph for its groups; remove it",
    ]);
    const bad = problems(document({ aad: { graph: { endpoint: 'https://graph.microsoft.com/v1.0' } } })).join('\n');
    expect(bad).to.include('gatehouse.authorization.claimSources.aad.graph.endpoint');
    expect(bad).to.include('without a path');
    expect(problems(document({ aad: { graph: { endpoint: 'ftp://graph.example' } } })).join('\n')).to.include(
      'expected an http(s) URL',
    );
    for (const maxPages of [0, 101, 1.5])
      expect(problems(document({ aad: { graph: { maxPages } } })).join('\n'), String(maxPages)).to.include(
        'gatehouse.authorization.claimSources.aad.graph.maxPages',
      );
  });
});
