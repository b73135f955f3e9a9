// Everything one gatehouse process serves, assembled from configuration:
// the webhook receiver, the auth layer with its token store, and the proxy.
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import type { Duplex } from 'node:stream';

import { AuthLayer } from '../core/auth-layer.js';
import type { AuthConfig } from '../core/config/auth-config.js';
import { encryptionKeyFromEnv } from '../core/crypto/keys.js';
import type { SessionRecord } from '../core/session/record.js';
import { FileSystemTokenStore, loadOrCreateKeyFile } from '../core/token-store/filesystem.js';
import type { Logger } from '../logging.js';
import type { GatehouseCore } from '../native/types.js';
import type { WebhookReceiverOptions } from '../webhook/config.js';
import { WebhookReceiver } from '../webhook/receiver.js';
import { createSidecar } from './app.js';
import type { Listening } from './listen.js';
import { createRequestListener } from './server.js';

export interface GatewayOptions {
  readonly config: AuthConfig;
  readonly upstream: string;
  readonly core: GatehouseCore;
  readonly logger: Logger;
  readonly env?: NodeJS.ProcessEnv;
  /** Master key; default GATEHOUSE_ENCRYPTION_KEY / WEBSITE_AUTH_ENCRYPTION_KEY, else a key file in the store directory. */
  readonly masterKey?: Buffer;
  readonly webhook?: WebhookReceiverOptions;
  readonly upstreamTimeoutMs?: number;
  readonly version?: string;
  readonly sessionCacheTtlMs?: number;
}

export interface Gateway {
  readonly layer: AuthLayer;
  readonly receiver: WebhookReceiver;
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void;
  readonly upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  close(): void;
}

const SWEEP_INTERVAL_MS = 10 * 60_000;

export function defaultStoreDirectory(config: AuthConfig): string {
  return config.tokenStore.directory ?? path.resolve('.gatehouse', 'tokens');
}

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const { config, logger } = options;
  const directory = defaultStoreDirectory(config);
  const masterKey = options.masterKey ?? encryptionKeyFromEnv(options.env) ?? (await loadOrCreateKeyFile(directory));
  const store = new FileSystemTokenStore<SessionRecord>({ directory, app: config.app, masterKey, logger });
  const layer = new AuthLayer({ config, store, masterKey, logger, ...(options.version ? { version: options.version } : {}), ...(options.sessionCacheTtlMs !== undefined ? { sessionCacheTtlMs: options.sessionCacheTtlMs } : {}) });
  const sidecar = createSidecar({ layer, upstream: options.upstream, core: options.core, logger, ...(options.upstreamTimeoutMs ? { upstreamTimeoutMs: options.upstreamTimeoutMs } : {}) });
  const receiver = new WebhookReceiver({ logger, core: options.core, ...(options.env ? { env: options.env } : {}), ...options.webhook });
  const sweep = setInterval(() => {
    store.sweep().then(
      (removed) => removed > 0 && logger.info({ removed }, 'expired sessions swept'),
      (error: unknown) => logger.warn({ reason: (error as Error).message }, 'session sweep failed'),
    );
  }, SWEEP_INTERVAL_MS);
  sweep.unref();
  return {
    layer,
    receiver,
    // Webhook deliveries are anonymous and signed: they go to the receiver, never through sign-in.
    listener: createRequestListener(receiver, sidecar.app),
    upgrade: sidecar.handleUpgrade,
    close: () => {
      clearInterval(sweep);
      sidecar.close();
    },
  };
}

export function attach(listening: Listening, gateway: Gateway): void {
  listening.server.on('request', gateway.listener);
  listening.server.on('upgrade', gateway.upgrade);
}
