import type { IncomingMessage, ServerResponse } from 'node:http';

import Koa from 'koa';

import { createLogger, type Logger } from '../logging.js';
import { logActiveCore, selectCore, type CoreSelection } from '../native/index.js';
import { AccessLog, resolveAccessLog } from './access-log.js';
import { listenEarly, type Listening } from './listen.js';
import {
  BAD_TARGET_MESSAGE,
  toOriginForm,
  UNSUPPORTED_CODING_MESSAGE,
  unsupportedTransferCoding,
} from './request-target.js';
import { openRedisLink } from '../core/token-store/redis-link.js';
import { redisKeyPrefix, redisSettings } from '../core/token-store/redis-settings.js';
import { closeGracefullyAfter } from '../lingering-close.js';
import { serveRequests } from './serve-requests.js';
import type { VerifyRoute } from './verify-route.js';
import { createNodeHandler } from '../webhook/node-handler.js';
import { WebhookReceiver } from '../webhook/receiver.js';
import type { WebhookReceiverOptions } from '../webhook/config.js';
import { errorResponse, JSON_CONTENT_TYPE } from '../webhook/response.js';

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

/** The Koa application of `serve` without an app: JSON 404s for every path (the listener answers the webhook path before it). */
export function createApp(): Koa {
  const app = new Koa();
  app.use(async (ctx) => {
    ctx.status = 404;
    ctx.type = JSON_CONTENT_TYPE;
    ctx.body = JSON.stringify({ error: 'Not found.' });
  });
  app.silent = true;
  return app;
}

/**
 * A server's request listener. Webhook deliveries go straight to the
 * receiver's node:http handler: they are anonymous and signed, never go
 * through sign-in, and skip Koa's per-request work; everything else goes to `app`.
 * Every route is matched on the origin form of the request target (request-target.ts). The
 * verify endpoint (forward authentication), when given, is served before Koa too.
 */
export function createRequestListener(
  receiver: WebhookReceiver,
  app: Koa = createApp(),
  verify?: VerifyRoute,
): (req: IncomingMessage, res: ServerResponse) => void {
  const webhook = createNodeHandler(receiver);
  const rest = app.callback();
  return (req, res) => {
    const target = toOriginForm(req);
    if (target.kind === 'ok' && !unsupportedTransferCoding(req)) {
      if (verify?.(req, res)) return;
      return webhook(req, res, () => void rest(req, res));
    }
    const [status, reason, message] =
      target.kind === 'refused'
        ? [400, target.reason, BAD_TARGET_MESSAGE]
        : [501, 'unsupported transfer coding', UNSUPPORTED_CODING_MESSAGE];
    receiver.logger.info({ reason, method: req.method }, 'request rejected');
    const refused = errorResponse(status, message, { closeConnection: true });
    closeGracefullyAfter(res);
    res.writeHead(refused.status, refused.headers).end(refused.body);
  };
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
  const served = createRequestListener(receiver);
  const listener = accessLog ? new AccessLog(logger).wrap(served) : served;
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
