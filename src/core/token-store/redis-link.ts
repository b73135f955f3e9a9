// One link to Redis for everything an instance keeps there (sessions,
// providers' sign-outs, webhook deliveries), with a subscription to the channel
// on which instances tell each other what they changed.
//
// Through node-redis (@redis/client), Redis' own client: commands fail at once
// while the connection is down (no offline queue: a request must not wait for a
// Redis that may not come back) and after a deadline when Redis is slow; both
// become StoreUnavailableError, which the auth layer answers with 503. The
// client reconnects by itself with a growing delay; each change of state is
// logged once. A single server, a Redis Cluster and Sentinel (redis-topology.ts).
import { randomBytes } from 'node:crypto';

import type { Logger } from '../../logging.js';
import type { ChangeChannel, ChangeNotice } from './change-channel.js';
import { REDIS_URL_VARIABLE, RedisSettingsError, shownSettings } from './redis-settings.js';
import { topologyFor, type Client, type RedisSettings, type Topology } from './redis-topology.js';
import { StoreUnavailableError } from './token-store.js';

export {
  parseRedisUrl,
  redactedRedisUrl,
  REDIS_PREFIX_VARIABLE,
  REDIS_URL_VARIABLE,
  redisKeyPrefix,
  RedisSettingsError,
} from './redis-settings.js';

/** How long one command may take, until its answer, before the store counts as unavailable for it. */
export const REDIS_COMMAND_TIMEOUT_MS = 2_000;
/**
 * Deletes a key only while it still holds the caller's value (a lock's token, a claim): one that
 * ran out and was taken by another holder is left to it. KEYS: the key; ARGV: the value.
 */
export const DELETE_IF_HELD = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`;

/** The longest wait between two attempts to reconnect. */
const RECONNECT_MAX_MS = 2_000;

type LinkState = 'connecting' | 'up' | 'down';

export interface RedisLinkOptions {
  /** One server (a shorthand for `settings` of mode single). */
  readonly url?: URL;
  readonly settings?: RedisSettings;
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
  readonly #topology: Topology;
  readonly #logger: Logger;
  readonly #shownUrl: string;
  readonly #commandTimeoutMs: number;
  #state: LinkState = 'connecting';
  #watching = false;
  #closed = false;
  readonly #changeListeners = new Set<(notice: ChangeNotice | undefined) => void>();

  constructor(options: RedisLinkOptions) {
    const settings =
      options.settings ?? (options.url !== undefined ? { mode: 'single' as const, urls: [options.url] } : undefined);
    if (settings === undefined) throw new RedisSettingsError('a link to Redis needs its URL');
    this.prefix = options.prefix;
    this.channel = `${options.prefix}changes`;
    this.#logger = options.logger;
    this.#shownUrl = shownSettings(settings);
    this.#commandTimeoutMs = options.commandTimeoutMs ?? REDIS_COMMAND_TIMEOUT_MS;
    // A reconnect after 50 ms, then twice as long each time up to 2 s, with some jitter so that
    // many instances do not all knock at once when Redis comes back.
    const reconnectStrategy = (retries: number) =>
      Math.min(50 * 2 ** Math.min(retries, 10), RECONNECT_MAX_MS) + Math.floor(Math.random() * 50);
    this.#topology = topologyFor(
      settings,
      { commandTimeoutMs: this.#commandTimeoutMs, reconnectStrategy },
      {
        up: () => this.#changeState('up'),
        down: (error) => this.#changeState('down', error),
        watchLost: () => this.#watchLost(),
        watchBack: () => this.#watchBack(),
      },
    );
  }

  /** Starts connecting; resolves once both connections are up or `waitMs` has passed, with whether they are. */
  async open(waitMs: number): Promise<boolean> {
    const listen = (message: string) => this.#heard(message);
    const connected = this.#topology.connect().then(() => this.#topology.subscribe(this.channel, listen));
    // connect() waits through every reconnect: the wait is bounded here, the connecting goes on.
    connected.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
    const up = await Promise.race([
      connected.then(
        () => true,
        () => false,
      ),
      waited,
    ]);
    clearTimeout(timer);
    return up;
  }

  /** Whether commands can be sent now. */
  get available(): boolean {
    return this.#state === 'up' && this.#topology.ready;
  }

  /** Whether other instances' notices are arriving now. */
  get watching(): boolean {
    return this.#watching && this.#topology.subscribed;
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
      timer = setTimeout(
        () => reject(new StoreUnavailableError(`redis: no answer within ${this.#commandTimeoutMs} ms`)),
        this.#commandTimeoutMs,
      );
    });
    try {
      return await Promise.race([command(this.#topology.commands), deadline]);
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw error;
      throw new StoreUnavailableError(`redis: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Every key matching `pattern` on every primary, in batches; failures become StoreUnavailableError as in `run`. */
  async *scan(pattern: string): AsyncGenerator<string[]> {
    try {
      yield* this.#topology.scan(pattern);
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
    if (this.#watching || !this.#topology.subscribed) return;
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
    this.#logger.error(
      { redis: this.#shownUrl, reason: error?.message },
      'redis store unreachable: protected requests answer 503 until it is back; reconnecting',
    );
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#changeListeners.clear();
    await this.#topology.close();
  }
}

/** How long a start waits for Redis before it goes on without (what needs it answers 503 until it is there). */
export const REDIS_START_WAIT_MS = 3_000;

/**
 * The link GATEHOUSE_REDIS_URL names, connecting. A URL that cannot be used throws
 * RedisSettingsError (a startup error); a Redis that does not answer within REDIS_START_WAIT_MS is
 * a warning, and the start goes on: Redis may come up after gatehouse.
 */
export async function openRedisLink(settings: RedisSettings, prefix: string, logger: Logger): Promise<RedisLink> {
  const link = new RedisLink({ settings, prefix, logger });
  if (!(await link.open(REDIS_START_WAIT_MS))) {
    logger.warn(
      { redis: link.shownUrl, waitedMs: REDIS_START_WAIT_MS },
      `${REDIS_URL_VARIABLE}: redis not reachable at start; starting anyway, what needs it answers 503 until it is`,
    );
  }
  return link;
}
