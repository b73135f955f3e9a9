// HTTP/1.1 over a bare socket, for tests that need bytes exactly as written
// (paths, request targets, hop-by-hop headers) or control over when they are sent.
import net from 'node:net';

/** A connection to a test server: write to `socket`; `received` resolves with everything the server sent, once it closes the connection. */
export function rawConnection(url: string): { socket: net.Socket; received: Promise<string> } {
  const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
  const received = new Promise<string>((resolve, reject) => {
    let data = '';
    socket.on('data', (d) => (data += d.toString('latin1')));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
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
