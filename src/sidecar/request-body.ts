// Whether a request has a body, by the framing node's parser read (it refuses any other framing):
// a Transfer-Encoding, or a Content-Length other than 0.
import type { IncomingHttpHeaders } from 'node:http';

export function declaresBody(headers: IncomingHttpHeaders): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && length !== '0';
}
