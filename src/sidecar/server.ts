// `gatehouse serve` without an app: the webhook receiver alone, behind the same front door as
// every mode (front-door.ts), with a JSON 404 for every other path.
import type { IncomingMessage, ServerResponse } from 'node:http';

import { createLogger, type Logger } from '../logging.js';
import { logActiveCore, selectCore, type CoreSelection } from '../native/index.js';
import { AccessLog, resolveAccessLog } from './access-log.js';
import { createFrontDoor, type FrontDoorMiddleware } from './front-door.js';
import { listenEarly, type Listening } from './listen.js';
import { openRedisLink } from '../core/token-store/redis-link.js';
import { redisKeyPrefix, redisSettings } from '../core/token-store/redis-settings.js';
import { serveRequests } from './serve-requests.js';
import { WebhookReceiver } from '../webhook/receiver.js';
import type { WebhookReceiverOptions } from '../webhook/config.js';
import { JSON_CONTENT_TYPE } from '../webhook/response.js';

export interface ServeOptions {
  host?: string;
  port?: number;
  webhook?: WebhookReceiverOptions;
  logger?: Logger;
  /** Core selection; default from GATEHOUSE_NATIVE. */
  core?: CoreSelection;
  /** One log line per request answered (access-log.ts); default GATEHOUSE_ACCESS_LOG, else off. */
  accessLog?: boolean;
  /** Environment read for GATEHOUSE_REDIS_URL (default process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface RunningServer extends Listening {
  readonly receiver: WebhookReceiver;
}

/** Nothing but deliveries is served here: a JSON 404, written by Koa. */
const notFound: FrontDoorMiddleware = (ctx) => {
  ctx.status = 404;
  ctx.type = JSON_CONTENT_TYPE;
  ctx.body = JSON.stringify({ error: 'Not found.' });
};

/** The request listener of the webhook receiver alone: the front door, a JSON 404 off the receiver's path. */
export function createRequestListener(
  receiver: WebhookReceiver,
  accessLog?: AccessLog,
): (req: IncomingMessage, res: ServerResponse) => void {
  return createFrontDoor({
    receiver,
    logger: receiver.logger,
    protectedPath: notFound,
    ...(accessLog ? { accessLog } : {}),
  }).listener;
}

export async function startServer(options: ServeOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger();
  const selection = options.core ?? selectCore();
  logActiveCore(logger, selection);
  // Several receivers behind one address share their delivery ids through Redis when it is named.
  const env = options.env ?? process.env;
  const settings = redisSettings(env);
  const redis =
    settings !== undefined ? await openRedisLink(settings, redisKeyPrefix('webhook receiver', env), logger) : undefined;
  const receiver = new WebhookReceiver({
    logger,
    core: selection.core,
    ...(redis ? { redis } : {}),
    ...options.webhook,
  });
  if (receiver.config.secrets.length === 0) {
    logger.warn(
      { variable: receiver.config.secretVariable },
      'webhook secret not set: deliveries will be answered 500',
    );
  }
  const accessLog = resolveAccessLog(options.accessLog, process.env);
  const listening = await listenEarly(options.host ?? '127.0.0.1', options.port ?? 8080);
  const listener = createRequestListener(receiver, accessLog ? new AccessLog(logger) : undefined);
  serveRequests(listening.server, listener, logger);
  const closeRedis = async () => {
    await redis?.close();
  };
  return {
    ...listening,
    receiver,
    close: () => listening.close().then(closeRedis),
    drain: (graceMs) => listening.drain(graceMs).then(async (finished) => (await closeRedis(), finished)),
  };
}
