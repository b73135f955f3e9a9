// An answer the app breaks off (it crashed, or closed the connection mid-body, or went silent
// past the upstream timeout once the answer had begun) can no longer become a 502 or 504: its
// status line has already gone to the client. http-proxy then simply stops copying, so the
// client kept a half answer on an open connection, waiting for the rest until its own idle
// timeout (65 s). The client's connection is cut instead, at once, as nginx does ("upstream
// prematurely closed connection"): the client sees the answer fail rather than stall, and an
// unterminated chunked body or a short Content-Length tells it the answer is not whole.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** For http-proxy's `proxyRes` event: watches the app's answer and cuts the client's connection if the answer ends before it is complete. */
export function cutOffWhenTheAppBreaksOff(
  onBroken: (req: IncomingMessage) => void,
): (proxyRes: IncomingMessage, req: IncomingMessage, res: ServerResponse) => void {
  return (proxyRes, req, res) => {
    proxyRes.once('close', () => {
      // Complete, or the client left first (which is what broke the app's answer off).
      if (proxyRes.complete || res.destroyed) return;
      onBroken(req);
      res.destroy();
    });
  };
}
