// identityProviders.facebook, gitHub and twitter: the providers that speak OAuth (1.0a for
// Twitter) rather than OpenID Connect, each with its own API for who signed in.
import type {
  FacebookProviderConfig,
  GitHubProviderConfig,
  Providers,
  TwitterProviderConfig,
} from './provider-settings.js';
import type { SecretReader } from './secret-reader.js';
import { fingerprint } from './provider-fingerprint.js';
import { withoutTrailingSlashes } from './without-trailing-slashes.js';

export const DEFAULT_FACEBOOK_GRAPH_VERSION = 'v19.0';

export function facebookProvider(
  fb: NonNullable<Providers['facebook']>,
  secrets: SecretReader,
): FacebookProviderConfig {
  const endpoints = fb.endpoints ?? {};
  return {
    kind: 'facebook',
    alias: 'facebook',
    appId: fb.registration.appId,
    appSecret: secrets.required(
      'identityProviders.facebook.registration.appSecretSettingName',
      fb.registration.appSecretSettingName,
    ),
    graphApiVersion: fb.graphApiVersion ?? DEFAULT_FACEBOOK_GRAPH_VERSION,
    scopes: fb.login?.scopes ?? ['public_profile', 'email'],
    dialogOrigin: withoutTrailingSlashes(endpoints.authorization ?? 'https://www.facebook.com'),
    graphOrigin: withoutTrailingSlashes(endpoints.graph ?? 'https://graph.facebook.com'),
    fingerprint: fingerprint([fb.registration.appId, endpoints]),
  };
}

export function gitHubProvider(gh: NonNullable<Providers['gitHub']>, secrets: SecretReader): GitHubProviderConfig {
  const endpoints = gh.endpoints ?? {};
  return {
    kind: 'github',
    alias: 'github',
    clientId: gh.registration.clientId,
    clientSecret: secrets.required(
      'identityProviders.gitHub.registration.clientSecretSettingName',
      gh.registration.clientSecretSettingName,
    ),
    // user:email reads the primary verified address when the profile's is private.
    scopes: gh.login?.scopes ?? ['read:user', 'user:email'],
    webOrigin: withoutTrailingSlashes(endpoints.web ?? 'https://github.com'),
    apiBase: withoutTrailingSlashes(endpoints.api ?? 'https://api.github.com'),
    fingerprint: fingerprint([gh.registration.clientId, endpoints]),
  };
}

export function twitterProvider(tw: NonNullable<Providers['twitter']>, secrets: SecretReader): TwitterProviderConfig {
  return {
    kind: 'twitter',
    alias: 'twitter',
    consumerKey: tw.registration.consumerKey,
    consumerSecret: secrets.required(
      'identityProviders.twitter.registration.consumerSecretSettingName',
      tw.registration.consumerSecretSettingName,
    ),
    apiOrigin: withoutTrailingSlashes(tw.endpoints?.api ?? 'https://api.twitter.com'),
    fingerprint: fingerprint([tw.registration.consumerKey, tw.endpoints ?? {}]),
  };
}
