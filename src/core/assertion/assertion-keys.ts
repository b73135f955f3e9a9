// Which keys sign identity assertions in a running gatehouse: those given in the environment
// (GATEHOUSE_ASSERTION_KEY), else gatehouse's own, kept in the token store; made (or read) at start.
import type { Logger } from '../../logging.js';
import type { AuthConfig } from '../config/auth-config.js';
import { MemoryTokenStore } from '../token-store/memory.js';
import { StoreUnavailableError, type TokenStore } from '../token-store/token-store.js';
import { ASSERTION_KEY_VARIABLE, environmentKeyRing } from './environment-keys.js';
import { StoredAssertionKeyRing, type AssertionKeyRing, type StoredKeyRing } from './key-ring.js';
import type { IdentityAssertionSettings } from './settings.js';
import { IdentityAssertions } from './signer.js';

/** The ring for `settings`, its first key made or read now; a store that cannot be reached yet is a warning. */
export async function startAssertionKeys(
  settings: IdentityAssertionSettings,
  store: TokenStore<StoredKeyRing>,
  env: NodeJS.ProcessEnv,
  logger: Logger,
): Promise<AssertionKeyRing> {
  const given = await environmentKeyRing(env);
  if (given !== undefined) {
    logger.info(`identity assertions: signed with the key in ${ASSERTION_KEY_VARIABLE}`);
    return given;
  }
  const ring = new StoredAssertionKeyRing({ store, lifetimeMs: settings.lifetimeMs });
  try {
    await ring.signingKey();
    logger.info('identity assertions: signed with keys kept in the token store');
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    // As for sessions: gatehouse starts, and assertions wait for the store (503 until then).
    logger.warn({ reason: error.message }, 'identity assertions: the token store cannot be reached yet for the keys');
  }
  return ring;
}

/** The assertion side of the auth layer: the keys (for the keys route) and the signer. */
export interface LayerAssertions {
  readonly ring: AssertionKeyRing;
  readonly signer: IdentityAssertions;
}

/**
 * The layer's assertions when `config` turns them on: with `ring` (the running gatehouse's, from
 * startAssertionKeys), else keys of this process alone, in memory.
 */
export function layerAssertions(
  config: Pick<AuthConfig, 'identityAssertion' | 'headerPrefix'>,
  ring: AssertionKeyRing | undefined,
  now: () => number,
): LayerAssertions | undefined {
  const settings = config.identityAssertion;
  if (settings === undefined) return undefined;
  const keys =
    ring ??
    new StoredAssertionKeyRing({
      store: new MemoryTokenStore<StoredKeyRing>(now),
      lifetimeMs: settings.lifetimeMs,
      now,
    });
  return {
    ring: keys,
    signer: new IdentityAssertions({ ring: keys, settings, headerPrefix: config.headerPrefix, now }),
  };
}
