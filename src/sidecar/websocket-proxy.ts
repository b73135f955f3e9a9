// A WebSocket handshake the core decided to forward: sent to the app on a connection of its
// own (node's HTTP client), and, once the app switches protocols, the two sockets joined. An app
// that declines answers an ordinary response, passed on as it is, and the connection closes.
// (undici's upgrade API reports such an answer only as an error, so the client would never see
// the app's reason.) The handshake carries no body: routeUpgrades refuses one.
import http, { type Agent, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

import type { Logger } from '../logging.js';
import type { AccessLog } from './access-log.js';
import { endUpgrade, fullAnswer, gatewayError } from './answers.js';
import type { AppForwarder } from './forward-to-app.js';
import { HOP_BY_HOP } from './forward-to-app.js';
import { loggedPath } from './logged-path.js';
import { upstreamHost } from './upstream-agent.js';

export interface WebSocketProxyOptions {
  readonly upstream: URL;
  /** An agent whose connections are used once (upstream-agent.ts names the app's TLS host). */
  readonly agent: Agent;
  /** How long the app may take to answer the handshake. */
  readonly timeoutMs: number;
  readonly logger: Logger;
  readonly accessLog?: AccessLog;
  readonly wantsJson: (req: IncomingMessage) => boolean;
  /** Where the handshake takes its place among the requests in flight to the app (the pool's bound). */
  readonly forwarder: AppForwarder;
  /** WebSocket connections open at once at most (each holds a connection to the app); past it, 503. */
  readonly maxOpen: number;
  /** An open WebSocket connection with no bytes either way for this long is closed (ms). */
  readonly idleMs: number;
}

/** The head of an answer as raw bytes: the status line and the headers as the app sent them, less `skip`. */
function answerHead(answer: IncomingMessage, skip: (name: string) => boolean, extra: readonly string[] = []): string {
  const lines = [`HTTP/1.1 ${answer.statusCode} ${answer.statusMessage ?? ''}`];
  const raw = answer.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) if (!skip(raw[i]!.toLowerCase())) lines.push(`${raw[i]}: ${raw[i + 1]}`);
  lines.push(...extra);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

export function webSocketProxy(
  options: WebSocketProxyOptions,
): (req: IncomingMessage, socket: Duplex, head: Buffer, headers: OutgoingHttpHeaders) => void {
  const { upstream, logger, accessLog, forwarder } = options;
  const client = upstream.protocol === 'https:' ? https : http;
  /** WebSocket connections open now (switched, not yet closed), and handshakes under way. */
  let open = 0;
  return (req, socket, head, headers) => {
    const path = loggedPath(req);
    if (open >= options.maxOpen) {
      logger.warn({ path, open }, 'too many WebSocket connections: handshake refused with 503');
      endUpgrade(socket, fullAnswer(options.wantsJson(req)));
      accessLog?.end(req, 503, true);
      return;
    }
    // A handshake waits for the app like any request: it takes a place among those in flight until answered.
    if (!forwarder.admit()) {
      forwarder.refuseFull(req, (answer) => endUpgrade(socket, answer));
      accessLog?.end(req, 503, true);
      return;
    }
    const toApp = client.request({
      agent: options.agent,
      protocol: upstream.protocol,
      hostname: upstreamHost(upstream),
      port: upstream.port,
      method: 'GET',
      path: req.url ?? '/',
      headers,
      setHost: false,
    });
    // Once, whichever way the handshake ends: its place given back, its access log line written.
    let settled = false;
    const settle = (status: number | undefined, answered: boolean): void => {
      if (settled) return;
      settled = true;
      forwarder.release();
      socket.off('close', abandon);
      socket.off('end', abandon);
      toApp.setTimeout(0);
      accessLog?.end(req, status, answered);
    };
    // A client that leaves (or half-closes) before the app has answered: the app's half is closed too.
    const abandon = (): void => {
      settle(undefined, false);
      toApp.destroy();
    };
    socket.once('close', abandon);
    socket.once('end', abandon);
    toApp.setTimeout(options.timeoutMs, () => {
      toApp.destroy(Object.assign(new Error('upstream timeout'), { code: 'ETIMEDOUT' }));
    });

    toApp.once('upgrade', (answer: IncomingMessage, appSocket: Socket, appHead: Buffer) => {
      settle(101, true);
      // Counted until either side closes: each open tunnel holds a connection to the app.
      open++;
      let counted = true;
      const closed = (): void => {
        if (counted) open--;
        counted = false;
        socket.destroy();
        appSocket.destroy();
      };
      appSocket.on('error', closed);
      socket.on('error', closed);
      appSocket.once('close', closed);
      socket.once('close', closed);
      // Whatever crosses the tunnel crosses the app's socket too (read or written): silence there is
      // silence both ways. Closed then, as nginx closes one after proxy_read_timeout.
      appSocket.setTimeout(options.idleMs, () => {
        logger.info({ path, idleMs: options.idleMs }, 'WebSocket connection closed: idle');
        closed();
      });
      socket.write(answerHead(answer, () => false));
      if (appHead.length > 0) socket.write(appHead);
      if (head.length > 0) appSocket.write(head);
      appSocket.pipe(socket);
      socket.pipe(appSocket);
    });

    // The app declined the upgrade with an ordinary answer: passed on, then the connection closes.
    let answering = false;
    toApp.once('response', (answer: IncomingMessage) => {
      answering = true;
      settle(answer.statusCode, true);
      // The body is delimited by the close (or its own Content-Length): node has already undone any chunking.
      socket.write(answerHead(answer, (name) => HOP_BY_HOP.has(name), ['Connection: close']));
      socket.once('close', () => answer.destroy());
      answer.pipe(socket);
    });

    toApp.once('error', (error: NodeJS.ErrnoException) => {
      if (socket.destroyed || settled) {
        settle(undefined, false);
        if (answering)
          socket.destroy(); // the app's answer was under way: cut, so a half answer does not look whole
        else logger.debug({ path }, 'client left before the app answered its upgrade');
        return;
      }
      settle(undefined, false);
      const timedOut = error.code === 'ETIMEDOUT';
      logger.error(
        { path, reason: timedOut ? 'upstream timeout' : (error.code ?? error.message) },
        'upstream websocket failed',
      );
      endUpgrade(socket, gatewayError(timedOut ? 504 : 502, options.wantsJson(req)));
    });
    toApp.end();
  };
}
