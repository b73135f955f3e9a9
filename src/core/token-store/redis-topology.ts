// Which Redis gatehouse talks to, and the node-redis connections for it: one
// server (GATEHOUSE_REDIS_URL), a Redis Cluster (GATEHOUSE_REDIS_MODE=cluster,
// the URL of one or more of its nodes) or a primary found through Redis
// Sentinel (GATEHOUSE_REDIS_MODE=sentinel, the URLs of the sentinels and
// GATEHOUSE_REDIS_SENTINEL_NAME, the name they know the primary by). Each
// topology gives the link the same few things: a client for keyed commands and
// scripts, a subscription, a scan over every primary, and its state.
import { createClient, createCluster, createSentinel } from '@redis/client';

import { RedisSettingsError } from './redis-settings.js';

export type RedisMode = 'single' | 'cluster' | 'sentinel';

export interface RedisSettings {
  readonly mode: RedisMode;
  readonly urls: readonly URL[];
  /** Sentinel: the name the sentinels know the primary by. */
  readonly sentinelName?: string;
}

/** A client for keyed commands and scripts: node-redis' single client, or what a cluster or a sentinel set offers alike. */
export type Client = ReturnType<typeof createClient>;

/** What a topology tells the link. */
export interface TopologyEvents {
  up(): void;
  down(error: Error): void;
  /** The subscription is down: notices may be missed from now on. */
  watchLost(): void;
  /** The subscription is back (node-redis subscribes again by itself). */
  watchBack(): void;
}

export interface Topology {
  readonly commands: Client;
  connect(): Promise<void>;
  subscribe(channel: string, listener: (message: string) => void): Promise<void>;
  /** Whether keyed commands can be sent now. */
  readonly ready: boolean;
  /** Whether the subscription is up now, as far as the topology can tell. */
  readonly subscribed: boolean;
  /** Every key matching `pattern`, in batches, from every primary. */
  scan(pattern: string): AsyncIterable<string[]>;
  close(): Promise<void>;
}

export interface TopologyOptions {
  readonly commandTimeoutMs: number;
  readonly reconnectStrategy: (retries: number) => number;
}

/** Node options from a URL: host, port, credentials, TLS, database. */
function nodeOptions(url: URL, options: TopologyOptions) {
  return {
    url: url.href,
    disableOfflineQueue: true,
    commandOptions: { timeout: options.commandTimeoutMs },
    socket: { reconnectStrategy: options.reconnectStrategy, connectTimeout: options.commandTimeoutMs },
  };
}

function single(url: URL, options: TopologyOptions, events: TopologyEvents): Topology {
  const client = createClient(nodeOptions(url, options));
  const subscriber = client.duplicate();
  let subscribed = false;
  client.on('ready', () => events.up());
  client.on('error', (error: Error) => events.down(error));
  const lost = () => {
    subscribed = false;
    events.watchLost();
  };
  subscriber.on('error', lost);
  subscriber.on('end', lost);
  subscriber.on('reconnecting', lost);
  subscriber.on('ready', () => {
    subscribed = true;
    events.watchBack();
  });
  return {
    commands: client as unknown as Client,
    connect: async () => void (await client.connect()),
    subscribe: async (channel, listener) => {
      await subscriber.connect();
      await subscriber.subscribe(channel, listener);
      subscribed = true;
      events.watchBack();
    },
    get ready() {
      return client.isReady;
    },
    get subscribed() {
      return subscribed && subscriber.isReady;
    },
    scan: (pattern) => client.scanIterator({ MATCH: pattern, COUNT: 500 }) as AsyncIterable<string[]>,
    close: async () => {
      await Promise.all(
        [client, subscriber].map((c) => (c.isOpen ? c.close() : Promise.resolve()).catch(() => undefined)),
      );
    },
  };
}

/** Node options for the nodes of a cluster or a sentinel set: the first URL's credentials, the link's socket settings. */
function sharedNodeOptions(first: URL, options: TopologyOptions) {
  const { url: _url, ...shared } = nodeOptions(first, options);
  return {
    ...shared,
    ...(first.username ? { username: decodeURIComponent(first.username) } : {}),
    ...(first.password ? { password: decodeURIComponent(first.password) } : {}),
  };
}

/** What a cluster client and a sentinel client offer alike: one client for commands and the subscription. */
interface WholeClient {
  readonly isReady: boolean;
  readonly isOpen: boolean;
  connect(): Promise<unknown>;
  close(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  on(event: string, listener: (error: Error) => void): unknown;
}

/**
 * A topology over one client that carries both commands and the subscription (a cluster's, a
 * sentinel set's). `upOn` is the event that says it serves, `lostOn` the one after which notices
 * may have been missed.
 */
function wholeClientTopology(
  client: WholeClient,
  events: TopologyEvents,
  signals: { readonly upOn: string; readonly lostOn: string },
  scan: Topology['scan'],
): Topology {
  let subscribed = false;
  client.on(signals.upOn, () => events.up());
  client.on('error', (error: Error) => events.down(error instanceof Error ? error : new Error(String(error))));
  client.on(signals.lostOn, () => {
    subscribed = false;
    events.watchLost();
  });
  return {
    commands: client as unknown as Client,
    connect: async () => void (await client.connect()),
    subscribe: async (channel, listener) => {
      await client.subscribe(channel, listener);
      subscribed = true;
      events.watchBack();
    },
    get ready() {
      return client.isReady;
    },
    get subscribed() {
      return subscribed && client.isReady;
    },
    scan,
    close: async () => {
      if (client.isOpen) await client.close().catch(() => undefined);
    },
  };
}

/**
 * A cluster: keyed commands go to the slot's primary (a record and its lock share one slot:
 * their keys carry the same hash tag); the subscription is node-redis' cluster pub/sub, which
 * moves to another node by itself. Its state is the cluster client's.
 */
function cluster(urls: readonly URL[], options: TopologyOptions, events: TopologyEvents): Topology {
  const client = createCluster({
    rootNodes: urls.map((url) => ({ url: url.href })),
    defaults: sharedNodeOptions(urls[0]!, options),
  });
  return wholeClientTopology(
    client as unknown as WholeClient,
    events,
    { upOn: 'connect', lostOn: 'disconnect' },
    async function* (pattern) {
      for (const master of client.masters) {
        const node = await client.nodeClient(master);
        yield* node.scanIterator({ MATCH: pattern, COUNT: 500 }) as AsyncIterable<string[]>;
      }
    },
  );
}

/**
 * A primary found through Redis Sentinel: node-redis asks the sentinels for it and follows a
 * failover; commands go to the primary, and so does the subscription. The URLs are the
 * sentinels'; the credentials of the first one are the primary's.
 */
function sentinel(urls: readonly URL[], name: string, options: TopologyOptions, events: TopologyEvents): Topology {
  const nodes = sharedNodeOptions(urls[0]!, options);
  const client = createSentinel({
    name,
    sentinelRootNodes: urls.map((url) => ({ host: url.hostname, port: Number(url.port || 26379) })),
    nodeClientOptions: nodes,
    sentinelClientOptions: { socket: nodes.socket },
  });
  return wholeClientTopology(
    client as unknown as WholeClient,
    events,
    { upOn: 'ready', lostOn: 'reconnecting' },
    (pattern) => (client as unknown as Client).scanIterator({ MATCH: pattern, COUNT: 500 }) as AsyncIterable<string[]>,
  );
}

export function topologyFor(settings: RedisSettings, options: TopologyOptions, events: TopologyEvents): Topology {
  switch (settings.mode) {
    case 'single':
      return single(settings.urls[0]!, options, events);
    case 'cluster':
      return cluster(settings.urls, options, events);
    case 'sentinel':
      if (settings.sentinelName === undefined)
        throw new RedisSettingsError("a sentinel topology needs the primary's name");
      return sentinel(settings.urls, settings.sentinelName, options, events);
  }
}
