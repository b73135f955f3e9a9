// A request whose body node's parser refused after its headers had been accepted (a bad chunk
// size, chunk extensions too large): by then the request may already be on its way to the app,
// or gatehouse may be reading its body. The refusal is answered by the 'clientError' listener
// (client-errors.ts); whoever holds the request stops here: the forwarder aborts the app's
// request at once, instead of leaving it to wait for a body that will never end.
import type { IncomingMessage } from 'node:http';

const stoppers = new WeakMap<IncomingMessage, () => void>();
const refused = new WeakSet<IncomingMessage>();

/** Registers what stops the work on `req` if its body is refused (at once, if it already was). */
export function onBodyRefused(req: IncomingMessage, stop: () => void): void {
  if (refused.has(req)) {
    stop();
    return;
  }
  stoppers.set(req, stop);
}

/** Marks `req`'s body as refused and stops whatever was registered for it. */
export function refuseBody(req: IncomingMessage): void {
  refused.add(req);
  const stop = stoppers.get(req);
  stoppers.delete(req);
  stop?.();
}
