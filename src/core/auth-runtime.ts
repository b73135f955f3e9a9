// The auth core as one host runs it: the token store (with its master key and
// periodic sweep) and the AuthLayer over it. The sidecar's gateway and the
// in-server entry both start from here, so both hosts run the same core the
// same way.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

import type { Logger } from '../logging.js';
import { AuthLayer, type StoreHealth } from './auth-layer.js';
import { startAssertionKeys } from './assertion/assertion-keys.js';
import type { StoredKeyRing } from './assertion/key-ring.js';
import { checkProvidersAtStart } from './providers/startup-check.js';
import type { AuthMetrics } from './auth-metrics.js';
import type { HeaderNormalizer } from './http/header-policy.js';
import type { AuthConfig } from './config/auth-config.js';
import { encryptionKeyFromEnv } from './crypto/keys.js';
import type { LastSeen } from './session/activity.js';
import type { ProviderSignOut } from './session/provider-sign-outs.js';
import type { SessionRecord } from './session/record.js';
import { FileSystemTokenStore } from './token-store/filesystem.js';
import { KEY_FILE_NAME, loadOrCreateKeyFile, recordsWithoutKeyFile } from './token-store/filesystem-key-file.js';
import { openRedisLink, type RedisLink } from './token-store/redis-link.js';
import { REDIS_URL_VARIABLE, redisKeyPrefix, redisSettings, RedisSettingsError } from './token-store/redis-settings.js';
import type { RedisSettings } from './token-store/redis-topology.js';
import { RedisTokenStore } from './token-store/redis.js';
import type { PublishingChannel } from './token-store/change-channel.js';
import { timedStore } from './token-store/timed.js';
import type { TokenStore } from './token-store/token-store.js';

export interface AuthRuntimeOptions {
  readonly config: AuthConfig;
  readonly logger: Logger;
  readonly env?: NodeJS.ProcessEnv;
  /** Master key; default GATEHOUSE_ENCRYPTION_KEY / WEBSITE_AUTH_ENCRYPTION_KEY, else a key file in the store directory. */
  readonly masterKey?: Buffer;
  readonly version?: string;
  readonly sessionCacheTtlMs?: number;
  /** The shared core's header normalization (the native addon, or its fallback). */
  readonly headers: HeaderNormalizer;
  /**
   * With the token store directory: where the processes sharing it on this host (the workers of
   * `serve --workers`) tell each other of every change, so that none trusts a cached session
   * another has logged out. (Redis has its own channel.)
   */
  readonly storeChannel?: PublishingChannel;
  /** Where sign-ins, refreshes, logouts and the store's latency are counted (default: nowhere). */
  readonly metrics?: AuthMetrics;
}

export interface AuthRuntime {
  readonly layer: AuthLayer;
  /** The link to Redis when GATEHOUSE_REDIS_URL is set (shared with the webhook receiver's deliveries). */
  readonly redis?: RedisLink;
  /** Which token store runs, and whether it can be reached now. */
  readonly store: StoreHealth;
  /** Stops the sweep timer, and closes the link to Redis. */
  close(): Promise<void>;
}

const SWEEP_INTERVAL_MS = 10 * 60_000;

/** Where providers' back-channel sign-outs are kept, beside the sessions (same key, same app scope). */
const SIGN_OUTS_DIRECTORY = 'provider-sign-outs';
/** The provider sessions sign-ins were made in: what a front-channel logout may name. */
const KNOWN_SESSIONS_DIRECTORY = 'provider-sessions';
/** The identity assertion keys (gatehouse.identityAssertion). */
const ASSERTION_KEYS_DIRECTORY = 'assertion-keys';
/** When sessions were last used, for the idle timeout. */
const LAST_SEEN_DIRECTORY = 'last-seen';

export function defaultStoreDirectory(config: AuthConfig): string {
  return config.tokenStore.directory ?? path.resolve('.gatehouse', 'tokens');
}

/** The token store's directory cannot be created or written: a startup error that names the setting. */
export class TokenStoreDirectoryError extends Error {}

/** Runs a step that touches the store directory; a file-system failure becomes a TokenStoreDirectoryError. */
async function inStoreDirectory<T>(directory: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    // System errors only (ENOENT, EACCES, EROFS…): node's own ERR_* codes are not the directory's fault.
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) throw error;
    throw new TokenStoreDirectoryError(
      `the token store directory ${directory} (login.tokenStore.fileSystem.directory) cannot be used: ${(error as Error).message}`,
    );
  }
}

export async function startAuthRuntime(options: AuthRuntimeOptions): Promise<AuthRuntime> {
  const { config, logger } = options;
  // Said at every start: a deployment copied from a template can have sign-in off without anyone noticing.
  if (!config.enabled)
    logger.warn(
      'authentication is off (platform.enabled: false): every request reaches the app anonymously; inbound identity headers are still stripped',
    );
  const env = options.env ?? process.env;
  const settings = redisSettings(env);
  const stores = settings !== undefined ? await redisStores(options, settings) : await fileSystemStores(options);
  const redis = stores.redis;
  const store: StoreHealth =
    redis !== undefined
      ? {
          kind: 'redis',
          get available() {
            return redis.available;
          },
        }
      : { kind: 'filesystem', available: true };
  const timed = <T>(kept: TokenStore<T>) =>
    options.metrics !== undefined ? timedStore(kept, store.kind, options.metrics) : kept;
  const assertionKeys =
    config.identityAssertion !== undefined
      ? await startAssertionKeys(config.identityAssertion, timed(await assertionKeyStore(options, stores)), env, logger)
      : undefined;
  const layer = new AuthLayer({
    config,
    headers: options.headers,
    store: timed(stores.sessions),
    signOutStore: timed(stores.signOuts),
    knownSessionStore: timed(stores.knownSessions),
    masterKey: stores.masterKey,
    logger,
    ...(redis !== undefined ? { storeHealth: store } : {}),
    ...(options.metrics !== undefined ? { metrics: options.metrics } : {}),
    ...(stores.exchanges !== undefined ? { exchangeStore: stores.exchanges } : {}),
    activityStore: timed(stores.lastSeen),
    ...(options.version ? { version: options.version } : {}),
    ...(options.sessionCacheTtlMs !== undefined ? { sessionCacheTtlMs: options.sessionCacheTtlMs } : {}),
    ...(assertionKeys !== undefined ? { assertionKeys } : {}),
  });
  // Redis removes expired records by itself (each key's TTL): only the filesystem store is swept.
  const sweep =
    stores.redis === undefined
      ? sweepPeriodically(stores.sessions, stores.signOuts, stores.knownSessions, stores.lastSeen, logger)
      : undefined;
  // A provider that cannot be reached is said now, with its URL and why, not at the first sign-in.
  const providerCheck = config.enabled ? checkProvidersAtStart(layer.providers.values(), logger) : undefined;
  return {
    layer,
    store,
    ...(stores.redis !== undefined ? { redis: stores.redis } : {}),
    close: async () => {
      clearInterval(sweep);
      providerCheck?.stop();
      await stores.redis?.close();
    },
  };
}

interface Stores {
  readonly sessions: TokenStore<SessionRecord>;
  readonly signOuts: TokenStore<ProviderSignOut>;
  /** The provider sessions sign-ins were made in (what a front-channel logout may end). */
  readonly knownSessions: TokenStore<ProviderSignOut>;
  readonly masterKey: Buffer;
  readonly redis?: RedisLink;
  /** Sessions made by token exchange, by what was exchanged (shared with Redis only). */
  readonly exchanges?: TokenStore<{ readonly id: string }>;
  /** When sessions were last used (the idle timeout). */
  readonly lastSeen: TokenStore<LastSeen>;
}

/** The default: encrypted files in the store directory, the key from the environment or a key file there. */
async function fileSystemStores(options: AuthRuntimeOptions): Promise<Stores> {
  const { config, logger } = options;
  const directory = defaultStoreDirectory(config);
  const givenKey = options.masterKey ?? encryptionKeyFromEnv(options.env);
  const orphaned = givenKey === undefined ? await recordsWithoutKeyFile(directory) : 0;
  const masterKey = givenKey ?? (await inStoreDirectory(directory, () => loadOrCreateKeyFile(directory)));
  if (orphaned > 0) {
    // Not silent: a key file deleted alone (a cleanup, a copied directory) ends every session.
    logger.error(
      { file: path.join(directory, KEY_FILE_NAME), records: orphaned },
      'token store key file was missing and has been created anew: the sessions stored with the old key cannot be read and have ended',
    );
  }
  const told = (kind: string) =>
    options.storeChannel !== undefined ? { channel: { via: options.storeChannel, kind } } : {};
  const sessions = new FileSystemTokenStore<SessionRecord>({
    directory,
    app: config.app,
    masterKey,
    masterKeyFromKeyFile: givenKey === undefined,
    logger,
    ...told('session'),
  });
  await inStoreDirectory(directory, () => sessions.prepare());
  // The key file, if any, lives in the sessions' directory: this store never writes one.
  const signOuts = new FileSystemTokenStore<ProviderSignOut>({
    directory: path.join(directory, SIGN_OUTS_DIRECTORY),
    app: config.app,
    masterKey,
    logger,
    ...told('signout'),
  });
  await inStoreDirectory(directory, () => signOuts.prepare());
  // Nobody needs telling of these: they are read only by a front-channel logout, never cached.
  const knownSessions = new FileSystemTokenStore<ProviderSignOut>({
    directory: path.join(directory, KNOWN_SESSIONS_DIRECTORY),
    app: config.app,
    masterKey,
    logger,
  });
  await inStoreDirectory(directory, () => knownSessions.prepare());
  // Read only when this instance's own knowledge would make a session idle: nobody needs telling.
  const lastSeen = new FileSystemTokenStore<LastSeen>({
    directory: path.join(directory, LAST_SEEN_DIRECTORY),
    app: config.app,
    masterKey,
    logger,
  });
  await inStoreDirectory(directory, () => lastSeen.prepare());
  if (config.tokenStore.directory === undefined) await announceDefaultDirectory(directory, logger);
  return { sessions, signOuts, knownSessions, lastSeen, masterKey };
}

/**
 * The default directory is made in the working directory, which is often an app's repository: it
 * is said at start, and a .gitignore beside it keeps it (and the key file in it) out of commits.
 */
async function announceDefaultDirectory(directory: string, logger: Logger): Promise<void> {
  const parent = path.dirname(directory);
  await writeFile(
    path.join(parent, '.gitignore'),
    "# gatehouse's token store and encryption key: never commit them\n*\n",
    { flag: 'wx', mode: 0o600 },
  ).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST')
      logger.warn(
        { directory: parent, reason: error.message },
        'token store: could not write a .gitignore beside the default directory',
      );
  });
  logger.info(
    { directory },
    'token store: the default directory (move it with login.tokenStore.fileSystem.directory, or set GATEHOUSE_REDIS_URL)',
  );
}

/**
 * GATEHOUSE_REDIS_URL: sessions and sign-outs in Redis, shared by every instance. A URL that cannot
 * be used is a startup error; a Redis that cannot be reached yet is a warning, and gatehouse starts
 * (it may come up after gatehouse; until then protected requests answer 503).
 */
async function redisStores(options: AuthRuntimeOptions, settings: RedisSettings): Promise<Stores> {
  const { config, logger } = options;
  const env = options.env ?? process.env;
  const prefix = redisKeyPrefix(config.app, env);
  const masterKey = options.masterKey ?? encryptionKeyFromEnv(env);
  // A key file is per host: instances on two hosts would each seal with a key of their own.
  if (masterKey === undefined)
    throw new RedisSettingsError(
      `${REDIS_URL_VARIABLE} needs GATEHOUSE_ENCRYPTION_KEY (32 bytes: 64 hex digits or base64), the same on every instance: each seals and opens the records the others wrote`,
    );
  const redis = await openRedisLink(settings, prefix, logger);
  const store = <T>(kind: string) => new RedisTokenStore<T>({ link: redis, kind, app: config.app, masterKey, logger });
  return {
    sessions: store<SessionRecord>('session'),
    signOuts: store<ProviderSignOut>('signout'),
    knownSessions: store<ProviderSignOut>('knownsession'),
    exchanges: store<{ readonly id: string }>('exchange'),
    lastSeen: store<LastSeen>('lastseen'),
    masterKey,
    redis,
  };
}

/**
 * Where the identity assertion keys are kept (one record, the key ring), beside the sessions: same
 * master key, same app scope. Read at start and then once a minute (key-ring.ts), so no instance
 * needs telling of its changes.
 */
async function assertionKeyStore(options: AuthRuntimeOptions, stores: Stores): Promise<TokenStore<StoredKeyRing>> {
  const { config, logger } = options;
  if (stores.redis !== undefined)
    return new RedisTokenStore<StoredKeyRing>({
      link: stores.redis,
      kind: 'assertionkeys',
      app: config.app,
      masterKey: stores.masterKey,
      logger,
    });
  const directory = defaultStoreDirectory(config);
  const keys = new FileSystemTokenStore<StoredKeyRing>({
    directory: path.join(directory, ASSERTION_KEYS_DIRECTORY),
    app: config.app,
    masterKey: stores.masterKey,
    logger,
  });
  await inStoreDirectory(directory, () => keys.prepare());
  return keys;
}

function sweepPeriodically(
  sessions: TokenStore<SessionRecord>,
  signOuts: TokenStore<ProviderSignOut>,
  knownSessions: TokenStore<ProviderSignOut>,
  lastSeen: TokenStore<LastSeen>,
  logger: Logger,
): NodeJS.Timeout {
  // Each store, with what its sweep logs when it removed records and when it failed.
  const sweeps = [
    [sessions, 'expired sessions swept', 'session sweep failed'],
    [signOuts, 'expired provider sign-outs swept', 'provider sign-out sweep failed'],
    [knownSessions, 'expired provider session notes swept', 'provider session note sweep failed'],
    [lastSeen, 'expired session last uses swept', 'session last use sweep failed'],
  ] as const;
  const sweep = setInterval(() => {
    for (const [swept, removedMessage, failedMessage] of sweeps) {
      swept.sweep().then(
        (removed) => removed > 0 && logger.info({ removed }, removedMessage),
        (error: unknown) => logger.warn({ reason: (error as Error).message }, failedMessage),
      );
    }
  }, SWEEP_INTERVAL_MS);
  sweep.unref();
  return sweep;
}
