// The settings that name the Redis of several instances, checked at start:
// GATEHOUSE_REDIS_URL (one URL, or several separated by commas: the nodes of a
// cluster, the sentinels), GATEHOUSE_REDIS_MODE and GATEHOUSE_REDIS_SENTINEL_NAME,
// GATEHOUSE_REDIS_KEY_PREFIX. Errors name the variable and never repeat a password.
import { createHash } from 'node:crypto';

import type { RedisMode, RedisSettings } from './redis-topology.js';

export const REDIS_URL_VARIABLE = 'GATEHOUSE_REDIS_URL';
export const REDIS_MODE_VARIABLE = 'GATEHOUSE_REDIS_MODE';
export const REDIS_SENTINEL_NAME_VARIABLE = 'GATEHOUSE_REDIS_SENTINEL_NAME';
export const REDIS_PREFIX_VARIABLE = 'GATEHOUSE_REDIS_KEY_PREFIX';

/** A setting of the link to Redis cannot be used: a startup error. */
export class RedisSettingsError extends Error {}

/** The URL with its password, if any, replaced: what logs and errors may show. */
export function redactedRedisUrl(url: URL): string {
  const shown = new URL(url.href);
  if (shown.password !== '') shown.password = '***';
  return shown.href;
}

/**
 * One URL of GATEHOUSE_REDIS_URL, checked: `redis://` or `rediss://` (TLS), a host, an optional
 * port, user and password, and an optional database number as the path.
 */
export function parseRedisUrl(text: string, variable = REDIS_URL_VARIABLE): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new RedisSettingsError(
      `${variable} is not a URL: expected redis://[user:password@]host[:port][/database] or rediss://…`,
    );
  }
  const shown = redactedRedisUrl(url);
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new RedisSettingsError(`${variable} (${shown}) must start with redis:// or rediss:// (TLS)`);
  if (url.hostname === '') throw new RedisSettingsError(`${variable} (${shown}) names no host`);
  if (url.search !== '' || url.hash !== '')
    throw new RedisSettingsError(
      `${variable} (${shown}) must not have a query or fragment: the client takes no options there`,
    );
  if (url.pathname !== '' && url.pathname !== '/' && !/^\/(?:[0-9]|1[0-5])$/.test(url.pathname))
    throw new RedisSettingsError(`${variable} (${shown}): the path must be a database number from 0 to 15, or nothing`);
  return url;
}

const MODES: readonly RedisMode[] = ['single', 'cluster', 'sentinel'];

/** The Redis the environment names, or undefined when GATEHOUSE_REDIS_URL is unset or empty. */
export function redisSettings(env: NodeJS.ProcessEnv): RedisSettings | undefined {
  const text = env[REDIS_URL_VARIABLE];
  if (text === undefined || text === '') return undefined;
  const modeText = env[REDIS_MODE_VARIABLE];
  const mode = (modeText === undefined || modeText === '' ? 'single' : modeText) as RedisMode;
  if (!MODES.includes(mode))
    throw new RedisSettingsError(
      `${REDIS_MODE_VARIABLE} must be single, cluster or sentinel (got ${JSON.stringify(modeText)})`,
    );
  const urls = text.split(',').map((part) => parseRedisUrl(part));
  if (mode === 'single' && urls.length > 1)
    throw new RedisSettingsError(
      `${REDIS_URL_VARIABLE} names ${urls.length} servers: several are the nodes of a cluster or the sentinels (set ${REDIS_MODE_VARIABLE}=cluster or sentinel)`,
    );
  if (mode === 'cluster' && urls.some((url) => url.pathname.length > 1))
    throw new RedisSettingsError(`${REDIS_URL_VARIABLE}: a Redis Cluster has only database 0`);
  if (mode !== 'sentinel') return { mode, urls };
  const name = env[REDIS_SENTINEL_NAME_VARIABLE];
  if (name === undefined || name === '')
    throw new RedisSettingsError(
      `${REDIS_MODE_VARIABLE}=sentinel needs ${REDIS_SENTINEL_NAME_VARIABLE}, the name the sentinels know the primary by`,
    );
  return { mode, urls, sentinelName: name };
}

/** Keys of one app under one prefix: GATEHOUSE_REDIS_KEY_PREFIX, else `gatehouse:` and a digest of the app scope. */
export function redisKeyPrefix(app: string, env: NodeJS.ProcessEnv): string {
  const configured = env[REDIS_PREFIX_VARIABLE];
  if (configured !== undefined && configured !== '') {
    if (/[\s{}]/.test(configured))
      throw new RedisSettingsError(
        `${REDIS_PREFIX_VARIABLE} must not hold white space or braces (braces pick a Redis Cluster slot)`,
      );
    return configured;
  }
  return `gatehouse:${createHash('sha256').update(app).digest('hex').slice(0, 16)}:`;
}

/** What the logs may say of where Redis is. */
export function shownSettings(settings: RedisSettings): string {
  const urls = settings.urls.map(redactedRedisUrl).join(',');
  return settings.mode === 'single'
    ? urls
    : `${settings.mode} ${urls}${settings.sentinelName !== undefined ? ` (${settings.sentinelName})` : ''}`;
}
