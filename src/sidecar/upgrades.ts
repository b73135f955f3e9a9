// Which protocol changes reach the app. node hands every request that asks to switch protocols
// (`Connection: upgrade` with `Upgrade: <anything>`) to the server's 'upgrade' listeners. Only
// WebSocket handshakes may be proxied as upgrades (the core's rule, core/http/protocol-upgrade.ts:
// an app that agreed to `Upgrade: h2c` would hand the client a connection beside gatehouse). Any
// other upgrade gets an answer all the same (curl --http2 on an http:// URL must not meet "Empty
// reply from server"): gatehouse ignores the upgrade, as RFC 9110 §7.8 lets a server do, serves the
// request as an ordinary one and strips its Upgrade header with the other hop-by-hop fields. The
// verify endpoint is served as an ordinary request whatever upgrade it carries: the upgrade is the
// original request's, which verify judges (a web server asks on the handshake it will proxy).
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

import { UPGRADE_REFUSED_MESSAGE, upgradeKind } from '../core/http/protocol-upgrade.js';
import { jsonDecision } from '../core/http/responses.js';
import type { Logger } from '../logging.js';
import { lingeringClose } from '../lingering-close.js';
import { endUpgrade } from './answers.js';
import { declaresBody } from './forward-to-app.js';
import { afterResponses, responseInProgress } from './responses-in-progress.js';

export type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/**
 * A handshake has no body (RFC 6455 §4.1): bytes after its headers would reach the app as the
 * first bytes of the new protocol, or, should the app decline, as a next request on its connection.
 */
export const WEBSOCKET_WITH_BODY_MESSAGE =
  'A WebSocket handshake carries no body: send it without Content-Length or Transfer-Encoding.';

export const PIPELINED_UPGRADE_MESSAGE = 'A protocol upgrade must be the only request in progress on its connection.';

/** A WebSocket handshake, as the core judges one (core/http/protocol-upgrade.ts). */
export function isWebSocketUpgrade(req: IncomingMessage): boolean {
  return upgradeKind(req.method ?? '', req.headers.upgrade) === 'websocket';
}

/**
 * Serves an upgrade request that is not proxied as an upgrade through the ordinary request
 * listener. The connection has left node's HTTP handling, so the answer closes it: ended, then
 * destroyed once written, as node closes a `Connection: close` one (a client that keeps its side
 * open does not keep the connection).
 */
function serveWithoutUpgrade(
  req: IncomingMessage,
  socket: Duplex,
  listener: (req: IncomingMessage, res: ServerResponse) => void,
): void {
  const connection = socket as Socket;
  const res = new http.ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(connection);
  res.once('finish', () => {
    res.detachSocket(connection);
    connection.destroySoon();
  });
  // The connection left node's HTTP handling, which would treat a client's half-close as the
  // end of its requests: the same here, or the request would stay open until the app's timeout.
  connection.once('end', () => {
    if (!res.writableFinished) connection.destroy();
  });
  listener(req, res);
}

/**
 * The server's 'upgrade' listener: WebSocket handshakes to `websocket`, which takes them (true) or
 * leaves them to be served as plain requests (false: the verify endpoint's); every other upgrade
 * served by `ordinary` as a plain request.
 */
export function routeUpgrades(options: {
  websocket: (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;
  ordinary: (req: IncomingMessage, res: ServerResponse) => void;
  logger: Logger;
}): UpgradeListener {
  return (req, socket, head) => {
    // node leaves an upgraded socket without an 'error' listener: a reset would be an uncaught error.
    socket.on('error', () => socket.destroy());
    if (responseInProgress(socket) !== undefined) {
      // Pipelined behind a request still being answered on this connection: node has handed the
      // socket over while that answer is still being written. Nothing is written until that answer
      // is done; then the upgrade is refused and the connection closed.
      options.logger.info(
        { reason: 'upgrade pipelined behind another request', method: req.method },
        'request rejected',
      );
      afterResponses(socket, () => {
        endUpgrade(socket, jsonDecision(400, { error: PIPELINED_UPGRADE_MESSAGE }));
        lingeringClose(socket);
      });
      return;
    }
    // node parses no body for a request it hands over as an upgrade: what follows the headers is
    // left on the socket as the new protocol's bytes, so a declared body could not be read as one.
    if (declaresBody(req.headers)) {
      const websocket = isWebSocketUpgrade(req);
      options.logger.info(
        {
          reason: websocket ? 'WebSocket handshake with a body' : 'upgrade other than WebSocket with a body',
          method: req.method,
        },
        'request rejected',
      );
      endUpgrade(
        socket,
        jsonDecision(400, { error: websocket ? WEBSOCKET_WITH_BODY_MESSAGE : UPGRADE_REFUSED_MESSAGE }),
      );
      return;
    }
    if (isWebSocketUpgrade(req) && options.websocket(req, socket, head)) return;
    serveWithoutUpgrade(req, socket, options.ordinary);
  };
}
