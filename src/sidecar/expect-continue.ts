// `Expect: 100-continue` (curl sends it with any body over 1 MiB): the client waits for a
// "100 Continue" before it uploads. node sends that 100 itself, before any handler runs, unless
// the server has a 'checkContinue' listener, so a request gatehouse refuses without reading its
// body (no session; a webhook receiver without a secret) would be told to upload the whole body
// first, only to be refused and have the body thrown away. With this listener the 100 goes out
// when something first reads the body (the proxy streaming it to the app, gatehouse reading an
// /.auth POST or a webhook delivery), as Go's server does; a request answered before that gets
// its answer without a 100.
import type { IncomingMessage, ServerResponse } from 'node:http';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** A server's 'checkContinue' listener that hands the request to `listener` with the 100 deferred. */
export function deferContinue(listener: Listener): Listener {
  return (req, res) => {
    const read = req._read;
    req._read = function readAfterContinue(this: IncomingMessage, size: number): void {
      req._read = read;
      // Once the answer has begun, node reads what is left only to discard it: no 100 then. (node
      // closes the connection after a final answer sent without the 100: the client may or may not
      // send the body it announced, so its next bytes could be either.)
      if (!res.headersSent) res.writeContinue();
      read.call(this, size);
    };
    listener(req, res);
  };
}
