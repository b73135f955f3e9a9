import type { ProviderConfig } from '../config/provider-settings.js';

/** How sign-in pages name the built-in providers; a custom provider goes by its alias. */
const DISPLAY_NAMES: Readonly<Record<ProviderConfig['kind'], string | undefined>> = {
  aad: 'Microsoft',
  google: 'Google',
  facebook: 'Facebook',
  github: 'GitHub',
  twitter: 'Twitter',
  apple: 'Apple',
  oidc: undefined,
};

/** What every provider reads straight from its settings. */
export abstract class ConfiguredProvider<C extends ProviderConfig> {
  constructor(readonly config: C) {}

  get alias(): string {
    return this.config.alias;
  }
  get kind(): C['kind'] {
    return this.config.kind;
  }
  get displayName(): string {
    return DISPLAY_NAMES[this.config.kind] ?? this.config.alias;
  }
  get fingerprint(): string {
    return this.config.fingerprint;
  }
}
