// Which response a client connection is writing, and waiting for it: node answers pipelined
// requests in order, one response at a time, so whatever gatehouse writes to the connection
// itself (a refusal of a request node could not parse, of a pipelined upgrade) must wait for the
// answers before it, or it would overtake or cut them.
import type http from 'node:http';
import type { Duplex } from 'node:stream';

/** The response node's socket is serving, if any (node's own clientError default reads the same field). */
export function responseInProgress(socket: Duplex): http.ServerResponse | undefined {
  return (socket as Duplex & { _httpMessage?: http.ServerResponse | null })._httpMessage ?? undefined;
}

/** Calls `then` once no response is in progress on `socket`: node starts a pipelined request's response when the one before it is done. */
export function afterResponses(socket: Duplex, then: () => void): void {
  const current = responseInProgress(socket);
  if (current === undefined) then();
  else current.once('close', () => afterResponses(socket, then));
}
