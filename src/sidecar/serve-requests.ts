// The server events every gatehouse server answers, whatever it serves: requests (those that
// expect a 100 Continue included), CONNECT, and requests node's parser refuses. One place, so
// that the sidecar and the webhook-only server cannot drift apart when node adds another way
// for a request to arrive outside 'request'.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

import type { Logger } from '../logging.js';
import { answerClientError, requestSeen } from './client-errors.js';
import { deferContinue } from './expect-continue.js';
import { startServing } from './listen.js';
import { refuseConnect } from './refuse-connect.js';

export function serveRequests(server: Server, listener: (req: IncomingMessage, res: ServerResponse) => void, logger: Logger): void {
  startServing(server);
  server.on('request', requestSeen);
  server.on('request', listener);
  const continued = deferContinue(listener);
  server.on('checkContinue', (req, res) => {
    requestSeen(req, res);
    continued(req, res);
  });
  server.on('connect', refuseConnect(logger));
  server.on('clientError', answerClientError(logger));
}
