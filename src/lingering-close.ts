// Closing a connection after a refusal sent while the client may still be sending (a body too
// large, a body that failed to parse, a body that came too slowly). Closing it outright while
// bytes are still arriving makes the kernel answer them with a reset, which can discard the
// refusal before the client has read it: the client sees ECONNRESET or EPIPE, not the 413. So,
// as nginx's lingering close does: say we are done (FIN), then keep reading and discarding what
// still comes, until the client closes its side, or for a bounded time and amount, then close.
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** How long a refused client may keep sending, and read the answer, before the connection is cut. */
export const LINGER_MS = 2_000;
/** How much a refused client may still send before the connection is cut. */
export const LINGER_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Ends `socket` gracefully and discards what the client still sends: no parser reads it any more
 * (a pipelined request behind a refusal is never served). Cut once the client has closed its side,
 * after LINGER_MS, or past LINGER_MAX_BYTES.
 */
export function lingeringClose(socket: Duplex): void {
  if (socket.destroyed) return;
  // node's HTTP parser reads the socket through its 'data' listener: it is taken off, so nothing
  // the client still sends becomes a request or a parse error.
  socket.removeAllListeners('data');
  let discarded = 0;
  socket.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_MAX_BYTES) socket.destroy();
  });
  socket.once('end', () => socket.destroy());
  const cut = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(cut));
  // The parser read the socket natively, so the stream still believes a read is under way and would
  // never ask for another: an empty push tells it none is, and the socket reads again.
  socket.push(Buffer.alloc(0));
  socket.resume();
  socket.end();
}

/**
 * Makes node's own close of `socket` (after a response with `Connection: close` is written, it
 * calls destroySoon) a lingering one.
 */
export function lingerWhenNodeCloses(socket: Duplex): void {
  (socket as Socket).destroySoon = () => lingeringClose(socket);
}

/**
 * Makes `res` the last answer on its connection, closed gracefully behind it. A response queued
 * behind a pipelined one has no socket yet: it gets its socket when its turn comes.
 */
export function closeGracefullyAfter(res: ServerResponse): void {
  res.shouldKeepAlive = false;
  if (res.socket) lingerWhenNodeCloses(res.socket);
  else res.once('socket', (socket: Socket) => lingerWhenNodeCloses(socket));
}
