// HTTP/1.1 over a bare socket, for tests that need bytes exactly as written
// (paths, request targets, hop-by-hop headers) or control over when they are sent.
import net, { type Server } from 'node:net';

/**
 * A connection to a test server: write to `socket`; `received` resolves with everything the server sent, once it
 * closes the connection. A reset counts as that close: a server that refuses a request may reset a client that
 * is still writing (what it answered first still arrives).
 */
export function rawConnection(url: string): { socket: net.Socket; received: Promise<string> } {
  const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
  const received = new Promise<string>((resolve, reject) => {
    let data = '';
    socket.on('data', (d) => (data += d.toString('latin1')));
    socket.on('close', () => resolve(data));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error); // else 'close' follows
    });
  });
  return { socket, received };
}

/**
 * Sends `request` and resolves with everything the server sent until it closed the connection;
 * with `until`, as soon as what arrived satisfies it (for answers on a connection kept alive).
 * The socket is never half-closed, as a browser's would not be.
 */
export function raw(url: string, request: string, until?: (received: string) => boolean): Promise<string> {
  const { socket, received } = rawConnection(url);
  socket.write(request);
  if (until === undefined) return received;
  return new Promise((resolve, reject) => {
    let seen = '';
    socket.on('data', (d) => {
      seen += d.toString('latin1');
      if (!until(seen)) return;
      socket.destroy();
      resolve(seen);
    });
    received.then(resolve, reject);
  });
}

/**
 * Writes `parts` and waits up to `waitMs` for the server to close the connection: what it sent, and whether it
 * closed (a server expected to hang up on a stalled client must do so in time; the socket is destroyed otherwise).
 */
export async function rawExchange(
  url: string,
  parts: ReadonlyArray<string | Buffer>,
  waitMs = 3000,
): Promise<{ response: string; closed: boolean }> {
  const { socket, received } = rawConnection(url);
  let response = '';
  socket.on('data', (d) => (response += d.toString('latin1')));
  for (const part of parts) socket.write(part);
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    received.then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waitMs))),
  ]);
  clearTimeout(timer);
  if (!closed) socket.destroy();
  return { response, closed };
}

/** The body of a raw HTTP/1.1 response, de-chunked when needed. */
export function rawBody(response: string): string {
  const split = response.indexOf('\r\n\r\n');
  const head = response.slice(0, split);
  let body = response.slice(split + 4);
  if (!/transfer-encoding: chunked/i.test(head)) return body;
  let out = '';
  for (;;) {
    const line = body.indexOf('\r\n');
    const size = parseInt(body.slice(0, line), 16);
    if (!size) return out;
    out += body.slice(line + 2, line + 2 + size);
    body = body.slice(line + 2 + size + 2);
  }
}

/** How many connections `server` holds open, upgraded ones included (node counts every accepted socket until it closes). */
export function openConnections(server: Server): Promise<number> {
  return new Promise((resolve, reject) =>
    server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}

/** Waits up to `limitMs` for `server` to have closed every connection; how many are still open. */
export async function connectionsLeftAfter(server: Server, limitMs: number): Promise<number> {
  const started = Date.now();
  while ((await openConnections(server)) > 0 && Date.now() - started < limitMs)
    await new Promise((resolve) => setTimeout(resolve, 50));
  return openConnections(server);
}
