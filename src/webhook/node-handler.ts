import type { IncomingMessage, ServerResponse } from 'node:http';

import { errorResponse } from './response.js';
import type { WebhookReceiver } from './receiver.js';
import { closeAfterResponse, runAfterResponse } from './send.js';

export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: () => void) => void;

function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const end = raw.search(/[?#]/);
  return end === -1 ? raw : raw.slice(0, end);
}

/**
 * A plain node:http request listener. Requests for other paths go to `next`
 * when given (connect-style), else get a JSON 404.
 */
export function createNodeHandler(receiver: WebhookReceiver): NodeHandler {
  return (req, res, next) => {
    if (pathOf(req.url) !== receiver.config.path) {
      if (next) return next();
      const notFound = errorResponse(404, 'Not found.');
      res.writeHead(notFound.status, notFound.headers).end(notFound.body);
      return;
    }
    void receiver
      .handle({
        method: req.method ?? '',
        headers: req.headers,
        body: req,
        url: req.url ?? '',
        rawHeaders: req.rawHeaders,
        remoteAddress: req.socket.remoteAddress ?? '',
      })
      .then((response) => {
        if (res.headersSent || res.destroyed) return;
        if (response.closeConnection) closeAfterResponse(req, res);
        runAfterResponse(res, response);
        res.writeHead(response.status, response.headers).end(response.body);
      });
  };
}
