// From resolved provider settings to the Provider objects the layer uses.
import type { ProviderConfig } from '../config/provider-settings.js';
import { FacebookProvider } from './facebook.js';
import { GitHubProvider } from './github.js';
import { OpenIdProvider } from './openid.js';
import type { Provider } from './provider.js';
import { TwitterProvider } from './twitter.js';

export function createProvider(config: ProviderConfig, now: () => number = Date.now): Provider {
  switch (config.kind) {
    case 'github':
      return new GitHubProvider(config);
    case 'facebook':
      return new FacebookProvider(config, now);
    case 'twitter':
      return new TwitterProvider(config);
    default:
      return new OpenIdProvider(config, now);
  }
}

export function createProviders(
  configs: ReadonlyMap<string, ProviderConfig>,
  now: () => number = Date.now,
): Map<string, Provider> {
  return new Map([...configs].map(([alias, config]) => [alias, createProvider(config, now)]));
}
