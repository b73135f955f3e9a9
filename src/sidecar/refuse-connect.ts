// CONNECT asks for a tunnel, which only a forward proxy gives. node hands such a request to the
// server's 'connect' listeners, and with none it destroys the socket: the client would see the
// connection drop with no answer at all. gatehouse answers it instead, and logs it like any refusal.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

import { jsonDecision } from '../core/http/responses.js';
import type { Logger } from '../logging.js';
import { lingeringClose } from '../lingering-close.js';
import { endUpgrade } from './answers.js';
import { afterResponses } from './responses-in-progress.js';

export const CONNECT_REFUSED_MESSAGE = 'CONNECT is not supported: gatehouse is a reverse proxy, not a tunnel.';

/** A server's 'connect' listener: 400, as nginx answers it (a client error: scanners probing for open proxies must not show as server errors), and the connection closed. The target is not logged (it names a host of the client's choosing). */
export function refuseConnect(logger: Logger): (req: IncomingMessage, socket: Duplex) => void {
  return (_req, socket) => {
    // The socket has left node's HTTP handling: without a listener a reset would be an uncaught error.
    socket.on('error', () => socket.destroy());
    logger.info({ reason: 'CONNECT not supported', method: 'CONNECT' }, 'request rejected');
    // Pipelined behind a request still being answered: after that answer, never ahead of it.
    afterResponses(socket, () => {
      endUpgrade(socket, jsonDecision(400, { error: CONNECT_REFUSED_MESSAGE }));
      lingeringClose(socket);
    });
  };
}
