import type { ProviderConfig } from '../config/provider-settings.js';

/** What every provider reads straight from its settings. */
export abstract class ConfiguredProvider<C extends ProviderConfig> {
  constructor(readonly config: C) {}

  get alias(): string {
    return this.config.alias;
  }
  get kind(): C['kind'] {
    return this.config.kind;
  }
  get fingerprint(): string {
    return this.config.fingerprint;
  }
}
