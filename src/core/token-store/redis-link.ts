// One connection to Redis for everything an instance keeps there (sessions,
// providers' sign-outs, webhook deliveries), and a second one subscribed to the
// channel on which instances tell each other what they changed.
//
// Through node-redis (@redis/client), Redis' own client: commands fail at once
// while the connection is down (no offline queue: a request must not wait for a
// Redis that may not come back) and after a deadline when Redis is slow; both
// become StoreUnavailableError, which the auth layer answers with 503. The
// client reconnects by itself with a growing delay; each change of state is
// logged once.
import { createHash, randomBytes } from 'node:crypto';

import { createClient } from '@redis/client';

import type { Logger } from '../../logging.js';
import type { ChangeChannel, ChangeNotice } from './change-channel.js';
import { StoreUnavailableError } from './token-store.js';

export const REDIS_URL_VARIABLE = 'GATEHOUSE_REDIS_URL';
export const REDIS_PREFIX_VARIABLE = 'GATEHOUSE_REDIS_KEY_PREFIX';
/** How long one command may take before the store counts as unavailable for it. */
export const REDIS_COMMAND_TIMEOUT_MS = 2_000;
/** The longest wait between two attempts to reconnect. */
const RECONNECT_MAX_MS = 2_000;

/** GATEHOUSE_REDIS_URL (or another setting of the link) cannot be used: a startup error. */
export class RedisSettingsError extends Error {}

/** The URL with its password, if any, replaced: what logs and errors may show. */
export function redactedRedisUrl(url: URL): string {
  const shown = new URL(url.href);
  if (shown.password !== '') shown.password = '***';
  return shown.href;
}

/**
 * GATEHOUSE_REDIS_URL, checked: `redis://` or `rediss://` (TLS), a host, an optional port, user and
 * password, and an optional database number as the path. Errors name the variable and never
 * repeat the password.
 */
export function parseRedisUrl(text: string, variable = REDIS_URL_VARIABLE): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new RedisSettingsError(`${variable} is not a URL: expected redis://[user:password@]host[:port][/database] or rediss://…`);
  }
  const shown = redactedRedisUrl(url);
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new RedisSettingsError(`${variable} (${shown}) must start with redis:// or rediss:// (TLS)`);
  if (url.hostname === '') throw new RedisSettingsError(`${variable} (${shown}) names no host`);
  if (url.search !== '' || url.hash !== '') throw new RedisSettingsError(`${variable} (${shown}) must not have a query or fragment: the client takes no options there`);
  if (url.pathname !== '' && url.pathname !== '/' && !/^\/(?:[0-9]|1[0-5])$/.test(url.pathname)) throw new RedisSettingsError(`${variable} (${shown}): the path must be a database number from 0 to 15, or nothing`);
  return url;
}

/** Keys of one app under one prefix: GATEHOUSE_REDIS_KEY_PREFIX, else `gatehouse:` and a digest of the app scope. */
export function redisKeyPrefix(app: string, env: NodeJS.ProcessEnv): string {
  const configured = env[REDIS_PREFIX_VARIABLE];
  if (configured !== undefined && configured !== '') {
    if (/[\s{}]/.test(configured)) throw new RedisSettingsError(`${REDIS_PREFIX_VARIABLE} must not hold white space or braces (braces pick a Redis Cluster slot)`);
    return configured;
  }
  return `gatehouse:${createHash('sha256').update(app).digest('hex').slice(0, 16)}:`;
}

/** What a script or command is given: the link's client, typed as loosely as node-redis lets. */
type Client = ReturnType<typeof createClient>;

type LinkState = 'connecting' | 'up' | 'down';

export interface RedisLinkOptions {
  readonly url: URL;
  readonly prefix: string;
  readonly logger: Logger;
  /** Per command, ms (default REDIS_COMMAND_TIMEOUT_MS). */
  readonly commandTimeoutMs?: number;
}

export class RedisLink implements ChangeChannel {
  /** This instance, on the change channel: its own notices are not news to it. */
  readonly origin = randomBytes(9).toString('base64url');
  readonly prefix: string;
  readonly channel: string;
  readonly #client: Client;
  readonly #subscriber: Client;
  readonly #logger: Logger;
  readonly #shownUrl: string;
  readonly #commandTimeoutMs: number;
  #state: LinkState = 'connecting';
  #watching = false;
  #closed = false;
  readonly #changeListeners = new Set<(notice: ChangeNotice | undefined) => void>();

  constructor(options: RedisLinkOptions) {
    this.prefix = options.prefix;
    this.channel = `${options.prefix}changes`;
    this.#logger = options.logger;
    this.#shownUrl = redactedRedisUrl(options.url);
    this.#commandTimeoutMs = options.commandTimeoutMs ?? REDIS_COMMAND_TIMEOUT_MS;
    // A reconnect after 50 ms, then twice as long each time up to 2 s, with some jitter so that
    // many instances do not all knock at once when Redis comes back.
    const reconnectStrategy = (retries: number) => Math.min(50 * 2 ** Math.min(retries, 10), RECONNECT_MAX_MS) + Math.floor(Math.random() * 50);
    this.#client = createClient({
      url: options.url.href,
      disableOfflineQueue: true,
      commandOptions: { timeout: this.#commandTimeoutMs },
      socket: { reconnectStrategy, connectTimeout: REDIS_COMMAND_TIMEOUT_MS },
    });
    this.#subscriber = this.#client.duplicate();
    this.#client.on('ready', () => this.#changeState('up'));
    this.#client.on('error', (error: Error) => this.#changeState('down', error));
    this.#subscriber.on('error', () => this.#watchLost());
    this.#subscriber.on('end', () => this.#watchLost());
    this.#subscriber.on('reconnecting', () => this.#watchLost());
    // node-redis subscribes again by itself on every reconnect.
    this.#subscriber.on('ready', () => this.#watchBack());
  }

  /** Starts connecting; resolves once both connections are up or `waitMs` has passed, with whether they are. */
  async open(waitMs: number): Promise<boolean> {
    const listen = (message: string) => this.#heard(message);
    const connected = Promise.all([this.#client.connect(), this.#subscriber.connect().then(() => this.#subscriber.subscribe(this.channel, listen)).then(() => this.#watchBack())]);
    // connect() waits through every reconnect: the wait is bounded here, the connecting goes on.
    connected.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
    const up = await Promise.race([connected.then(() => true, () => false), waited]);
    clearTimeout(timer);
    return up;
  }

  /** Whether commands can be sent now. */
  get available(): boolean {
    return this.#state === 'up' && this.#client.isReady;
  }

  /** Whether other instances' notices are arriving now. */
  get watching(): boolean {
    return this.#watching && this.#subscriber.isReady;
  }

  /** What the logs may say of where Redis is. */
  get shownUrl(): string {
    return this.#shownUrl;
  }

  /**
   * Runs a command; any failure of Redis or of the link becomes StoreUnavailableError, and so does
   * a command not answered within the deadline. (node-redis' own command timeout covers only the
   * wait to be sent: a Redis that takes a command and then answers nothing, frozen or stuck in a
   * long script, would hold every request that needs it.) The command left behind is answered to
   * nobody when Redis comes back.
   */
  async run<T>(command: (client: Client) => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreUnavailableError(`redis: no answer within ${this.#commandTimeoutMs} ms`)), this.#commandTimeoutMs);
    });
    try {
      return await Promise.race([command(this.#client), deadline]);
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw error;
      throw new StoreUnavailableError(`redis: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The values of an iterator over replies (a SCAN), its failures turned into StoreUnavailableError as `run` does. */
  async *iterate<T>(replies: AsyncIterable<T>): AsyncGenerator<T> {
    try {
      yield* replies;
    } catch (error) {
      throw new StoreUnavailableError(`redis: ${(error as Error).message}`);
    }
  }

  /** Runs a Lua script (keys first, then arguments), as `run` does. */
  script(source: string, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    return this.run((client) => client.eval(source, { keys: [...keys], arguments: [...args] }));
  }

  /** The notice `notify` scripts publish for a change: who made it, of what kind, to which record. */
  notice(kind: string, name: string): string {
    return `${this.origin} ${kind} ${name}`;
  }

  /** `listener` hears other instances' changes, and `undefined` whenever some may have been missed. */
  onChange(listener: (notice: ChangeNotice | undefined) => void): void {
    this.#changeListeners.add(listener);
  }

  #heard(message: string): void {
    const [origin, kind, name] = message.split(' ');
    if (origin === this.origin || kind === undefined || name === undefined) return;
    for (const listener of this.#changeListeners) listener({ kind, name });
  }

  #watchLost(): void {
    if (!this.#watching) return;
    this.#watching = false;
    for (const listener of this.#changeListeners) listener(undefined);
  }

  #watchBack(): void {
    if (this.#watching || !this.#subscriber.isReady) return;
    this.#watching = true;
    // Notices sent while the subscription was down are lost: what was cached meanwhile is read again.
    for (const listener of this.#changeListeners) listener(undefined);
  }

  #changeState(state: LinkState, error?: Error): void {
    if (this.#closed || state === this.#state) return;
    const before = this.#state;
    this.#state = state;
    if (state === 'up') {
      if (before === 'connecting') this.#logger.info({ redis: this.#shownUrl }, 'redis store connected');
      else this.#logger.warn({ redis: this.#shownUrl }, 'redis store reachable again: service resumed');
      return;
    }
    this.#logger.error({ redis: this.#shownUrl, reason: error?.message }, 'redis store unreachable: protected requests answer 503 until it is back; reconnecting');
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#changeListeners.clear();
    await Promise.all([this.#client, this.#subscriber].map((client) => (client.isOpen ? client.close() : Promise.resolve()).catch(() => undefined)));
  }
}

/** How long a start waits for Redis before it goes on without (what needs it answers 503 until it is there). */
export const REDIS_START_WAIT_MS = 3_000;

/**
 * The link GATEHOUSE_REDIS_URL names, connecting. A URL that cannot be used throws
 * RedisSettingsError (a startup error); a Redis that does not answer within REDIS_START_WAIT_MS is
 * a warning, and the start goes on: Redis may come up after gatehouse.
 */
export async function openRedisLink(text: string, prefix: string, logger: Logger): Promise<RedisLink> {
  const link = new RedisLink({ url: parseRedisUrl(text), prefix, logger });
  if (!(await link.open(REDIS_START_WAIT_MS))) {
    logger.warn({ redis: link.shownUrl, waitedMs: REDIS_START_WAIT_MS }, `${REDIS_URL_VARIABLE}: redis not reachable at start; starting anyway, what needs it answers 503 until it is`);
  }
  return link;
}
