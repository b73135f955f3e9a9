// A custom OpenID provider's `validation.introspection` block: whether opaque
// bearer tokens are introspected, where, and for how long an answer is trusted.
// See docs/configuration.md#opaque-bearer-tokens.
import { DEFAULT_INTROSPECTION_CACHE_MS } from '../tokens/introspection.js';
import { timeSpanMs, type AuthSettingsDocument } from './schema.js';

type Block = NonNullable<
  NonNullable<
    NonNullable<AuthSettingsDocument['identityProviders']>['customOpenIdConnectProviders']
  >[string]['validation']
>['introspection'];

export interface IntrospectionConfig {
  /** false: opaque bearer tokens are refused; true: introspected when the provider has an endpoint. */
  readonly enabled: boolean;
  readonly endpoint?: string;
  readonly cacheMs: number;
}

/** The block resolved; `credentials`: whether the client has a secret or a key to introspect with. */
export function introspectionConfig(
  path: string,
  block: Block,
  credentials: boolean,
  problems: string[],
): IntrospectionConfig {
  if (block?.enabled === true && !credentials)
    problems.push(`${path}.enabled: introspection needs the client's credentials (a client secret or a private key)`);
  return {
    enabled: (block?.enabled ?? true) && credentials,
    ...(block?.endpoint !== undefined ? { endpoint: block.endpoint } : {}),
    cacheMs: block?.cacheDuration !== undefined ? timeSpanMs(block.cacheDuration) : DEFAULT_INTROSPECTION_CACHE_MS,
  };
}
