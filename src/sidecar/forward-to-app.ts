// Sends a request the core decided to forward to the app, and the app's answer back: the
// sidecar's proxy, on undici (upstream-pool.ts). What it adds to the pool:
// - admission: requests in flight (on a connection or waiting for one) are bounded; past the
//   bound the answer is 503 with Retry-After at once, never an unbounded queue;
// - the client's departure (or a body gatehouse refused) aborts the app's request at once, so
//   an abandoned request frees its connection instead of holding it until the upstream timeout;
// - an upload that stalls or crawls is given up (upload-watch.ts);
// - the app's answer is passed on with its connection-specific headers left on the app's hop
//   (the hop's fields are named here, for the app's copy of the request too: app.ts);
// - a client must read the answer at a minimum rate (download-rate.ts);
// - one more try, on another connection, for a request without a body and without side
//   effects whose connection failed before any answer (upstream-failure.ts).
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';

import type { Dispatcher, Pool } from 'undici';

import { closeGracefullyAfter } from '../lingering-close.js';
import type { RespondDecision } from '../core/http/request-view.js';
import type { Logger } from '../logging.js';
import { fullAnswer, writeAnswer } from './answers.js';
import { onBodyRefused } from './body-refusal.js';
import { awaitDrain, DEFAULT_DOWNLOAD_RATE, type DownloadRate } from './download-rate.js';
import { loggedPath } from './logged-path.js';
import { UpstreamFailures } from './upstream-failure.js';
import { watchUpload } from './upload-watch.js';

export interface AppForwarderOptions {
  readonly pool: Pool;
  /** Requests in flight at most (on a connection or waiting for one); past it, 503. */
  readonly maxInFlight: number;
  /** How long a request body may stop arriving before the request is given up (408). */
  readonly timeoutMs: number;
  readonly logger: Logger;
  /** Whether the caller wants JSON (else an error page). */
  readonly wantsJson: (req: IncomingMessage) => boolean;
  /** Called with each answer of the app's, before it is passed on. */
  readonly onAnswer?: (req: IncomingMessage, status: number) => void;
  /** How fast clients must read answers (default DEFAULT_DOWNLOAD_RATE, download-rate.ts). */
  readonly downloadRate?: DownloadRate;
  /**
   * Told of each request the app did not answer: `timeout` (504), `error` (502: unreachable, reset,
   * broken off), `full` (503: the connections and their queue were full) (metrics).
   */
  readonly onUpstreamFailure?: (kind: 'timeout' | 'error' | 'full') => void;
}

// The hop each message crosses. Connection-specific fields (RFC 9110 §7.6.1) describe one hop,
// client to gatehouse or gatehouse to app, and are never passed on to the other: the app's copy of
// a request is made without the client's (app.ts, forwardHeaders), and the app's answer reaches the
// client without the app's (appAnswerHeaders).

/** The fields every hop has of its own, plus the legacy ones proxies drop (lower case, as node names them). */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
]);

/**
 * Fields a `Connection` header may name but never removes: the message's framing and its Host.
 * A request whose `Connection` named its own Content-Length would otherwise go on with its body
 * and nothing saying where the body ends, and the app would read the body as a next request.
 */
const NEVER_NAMED = new Set(['content-length', 'transfer-encoding', 'host']);

/** The further fields a `Connection` header names (lower case, without the fixed ones). */
export function namedByConnection(connection: string): readonly string[] {
  // The everyday single values (keep-alive, close) name nothing further: answered without a split.
  if (!connection.includes(',')) {
    const only = connection.trim().toLowerCase();
    return only === '' || HOP_BY_HOP.has(only) || NEVER_NAMED.has(only) ? NOTHING : [only];
  }
  const named: string[] = [];
  for (const name of connection.split(',')) {
    const trimmed = name.trim().toLowerCase();
    if (trimmed !== '' && !HOP_BY_HOP.has(trimmed) && !NEVER_NAMED.has(trimmed)) named.push(trimmed);
  }
  return named;
}

const NOTHING: readonly string[] = [];

/**
 * The app's answer headers (lower-case names, as undici gives them) as the client receives them:
 * the app's connection-specific headers stay on the app's hop (its `Connection`, its idle-timeout
 * hint `Keep-Alive`, which undici reads for its own pool, and whatever private field its
 * `Connection` header names). The framing and the client's `Connection` are node's to choose for
 * the client's hop.
 */
function appAnswerHeaders(source: Record<string, string | string[] | undefined>): OutgoingHttpHeaders {
  const connection = source.connection;
  const named = connection === undefined ? [] : namedByConnection(String(connection));
  const kept: OutgoingHttpHeaders = {};
  for (const name in source) {
    const value = source[name];
    if (value === undefined || HOP_BY_HOP.has(name) || (named.length > 0 && named.includes(name))) continue;
    kept[name] = value;
  }
  return kept;
}

/**
 * What to do when a client connection closes, per connection: one listener however many requests
 * are pipelined on it. Each request's entry is a Releasable (below), released when the request is
 * done: the connection's set outlives its requests, and V8 keeps a set's outgrown tables linked to
 * its new ones with the entries they held, so an entry that held the request itself kept the
 * request alive through minor collections, as the WeakMap below does.
 */
const onClose = new WeakMap<Socket, Set<Releasable>>();

function onConnectionClose(socket: Socket, then: Releasable): void {
  let waiting = onClose.get(socket);
  if (waiting === undefined) {
    const set = new Set<Releasable>();
    waiting = set;
    onClose.set(socket, set);
    socket.once('close', () => {
      onClose.delete(socket);
      for (const callback of set) callback.call();
    });
  }
  waiting.add(then);
}

function forgetOnConnectionClose(socket: Socket, then: Releasable): void {
  onClose.get(socket)?.delete(then);
}

/**
 * A callback for a registry that outlives the request (body-refusal.ts keeps it in a WeakMap keyed
 * by the request), which lets go of the request's state once released. V8's young-generation
 * collector treats a WeakMap's values as strong whatever becomes of their keys, so a callback that
 * closed over the request kept its own key alive through every minor collection: each request's
 * whole graph (node's request and response, the exchange, undici's request, the headers) survived
 * two of them, was promoted to the old generation, and waited there for a full collection. At about
 * 1000 requests a second that was 2.5 MB copied per minor collection, pauses of 4–14 ms that set
 * the proxy's p99 (BENCHMARKS.md, "the tail at a fixed rate"). Released when the request is done, the
 * callback holds nothing of it, and the request's objects die young.
 */
interface Releasable {
  readonly call: () => void;
  release(): void;
}

function releasable(then: () => void): Releasable {
  let held: (() => void) | undefined = then;
  return {
    call: () => held?.(),
    release: () => {
      held = undefined;
    },
  };
}

/** Why gatehouse gave up on a request itself (the client left, or its body was refused): no answer is owed. */
class Abandoned extends Error {
  constructor() {
    super('the client left, or its body was refused');
  }
}

/** One request on its way to the app and its answer on its way back (undici's dispatch handler). */
class Exchange implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | undefined;
  #abandoned = false;
  /** The client's answer is whole already (an answer that has no body). */
  #complete = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly onFailure: (error: Error) => void,
    private readonly onAnswer: ((status: number) => void) | undefined,
    private readonly downloadRate: DownloadRate,
    /** The client reads too slowly: the connection is being closed. */
    private readonly onSlowReader: () => void,
  ) {}

  /** Stops the exchange: at once if it has started, else as soon as it does. */
  abandon(): void {
    this.#abandoned = true;
    this.#controller?.abort(new Abandoned());
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abandoned) controller.abort(new Abandoned());
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200) return; // an interim answer (100 Continue, 103 Early Hints): not passed on
    this.onAnswer?.(statusCode);
    const { res } = this;
    // The app answered before the request's body had all arrived: the connection closes behind the
    // answer (gracefully), rather than waiting on the rest of a body nobody reads any more.
    if (!res.req.complete) closeGracefullyAfter(res);
    res.writeHead(statusCode, appAnswerHeaders(headers));
    // These answers have no body whatever their Content-Length says (a 304 may name the length of
    // what it stands for): done now. undici, counting the body against that length, reports the
    // rest as an error, which is then ignored.
    if (statusCode === 204 || statusCode === 304 || res.req.method === 'HEAD') {
      this.#complete = true;
      res.end();
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#complete) return;
    // A client that reads slowly slows the app's answer down instead of filling memory.
    if (this.res.write(chunk)) return;
    controller.pause();
    // ...but no slower than the minimum rate (download-rate.ts).
    awaitDrain(this.res, this.downloadRate, this.onSlowReader, () => controller.resume());
  }

  onResponseEnd(): void {
    if (!this.#complete) this.res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (error instanceof Abandoned || this.#complete) return;
    this.onFailure(error);
  }
}

/**
 * Whether a request has a body, by the framing node's parser read (it refuses any other framing):
 * a Transfer-Encoding, or a Content-Length other than 0.
 */
export function declaresBody(headers: {
  readonly 'transfer-encoding'?: string | undefined;
  readonly 'content-length'?: string | undefined;
}): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && length !== '0';
}

export class AppForwarder {
  #inFlight = 0;
  readonly #failures: UpstreamFailures;
  readonly #downloadRate: DownloadRate;

  constructor(private readonly options: AppForwarderOptions) {
    this.#failures = new UpstreamFailures(options);
    this.#downloadRate = options.downloadRate ?? DEFAULT_DOWNLOAD_RATE;
  }

  /** Requests forwarded and not yet done with (for tests and metrics). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Takes a place among the requests in flight for one that goes to the app another way (a
   * WebSocket handshake, until the app has answered it): false, and nothing taken, when full.
   * The caller gives it back with release().
   */
  admit(): boolean {
    if (this.#inFlight >= this.options.maxInFlight) return false;
    this.#inFlight += 1;
    return true;
  }

  release(): void {
    this.#inFlight -= 1;
  }

  /** Refuses `req` for a full bound, logged: 503 with Retry-After, which `send` writes the host's way. */
  refuseFull(req: IncomingMessage, send: (answer: RespondDecision) => void): void {
    this.options.logger.warn(
      { path: loggedPath(req), inFlight: this.#inFlight },
      'upstream pool full: request refused with 503',
    );
    this.options.onUpstreamFailure?.('full');
    send(fullAnswer(this.options.wantsJson(req)));
  }

  /**
   * Forwards `req` with `headers` (hop-by-hop fields removed, framing as forwardHeaders leaves it)
   * and writes the app's answer to `res`, or gatehouse's own 502/503/504.
   */
  forward(req: IncomingMessage, res: ServerResponse, headers: OutgoingHttpHeaders): void {
    // The client's connection is gone already (a request pipelined behind an answer that closed it): nobody to answer.
    if (req.socket.destroyed) return;
    // Read through a stream of its own: undici destroys the body it was given when the request
    // fails, and destroying node's request would cut the connection before gatehouse's answer.
    const body = declaresBody(req.headers) ? req.pipe(new PassThrough()) : null;
    let current: Exchange | undefined;
    let started = false;
    const stalled =
      body === null
        ? undefined
        : watchUpload(req, res, {
            timeoutMs: this.options.timeoutMs,
            logger: this.options.logger,
            wantsJson: this.options.wantsJson,
            abandon: () => current?.abandon(),
          });
    /** Nothing more to time, and nothing more to wait for before sending the request to the app. */
    const stopWaiting = (): void => {
      if (stalled !== undefined) clearInterval(stalled);
      req.off('data', start);
      req.off('end', start);
    };
    // Refused and answered by gatehouse (client-errors.ts): nothing to send the app.
    const onRefused = releasable(() => {
      stopWaiting();
      current?.abandon();
    });
    let done = false;
    const finished = (): void => {
      if (done) return;
      done = true;
      if (started) this.release();
      stopWaiting();
      onRefused.release();
      onClosed.release();
      forgetOnConnectionClose(req.socket, onClosed);
      // Gone before its answer was written whole: the app's request is abandoned with it.
      if (!res.writableFinished) current?.abandon();
    };
    res.once('close', finished);
    // A response queued behind a pipelined one is never closed by node when the connection goes
    // (an HTTP/1.0 client that closes after its first answer): the connection's close ends it too.
    const onClosed = releasable(finished);
    onConnectionClose(req.socket, onClosed);
    // Only a body node reads can be refused: a request without one never is (and most have none).
    if (body !== null) onBodyRefused(req, onRefused.call);
    const onAnswer = this.options.onAnswer;
    const attempt = (retried: boolean): void => {
      current = new Exchange(
        res,
        (error) => this.#failures.failed(error as NodeJS.ErrnoException, req, res, body, retried, attempt),
        onAnswer && ((status) => onAnswer(req, status)),
        this.#downloadRate,
        () =>
          this.options.logger.info(
            { path: loggedPath(req), reason: 'the client reads the answer too slowly' },
            'response abandoned',
          ),
      );
      try {
        this.options.pool.dispatch(
          {
            method: req.method ?? 'GET',
            path: req.url ?? '/',
            headers: headers as Record<string, string | string[]>,
            body,
          },
          current,
        );
      } catch (error) {
        // undici refuses what it cannot send (it reports most such refusals to the handler instead).
        this.#failures.failed(error as NodeJS.ErrnoException, req, res, body, true, attempt);
      }
    };
    // Admitted and sent to the app once there is something to send: a request whose body has not
    // begun to arrive takes no connection to the app (and no place in the bound) while it waits.
    const start = (): void => {
      if (started || done) return;
      req.off('data', start);
      req.off('end', start);
      if (!this.admit()) {
        stopWaiting();
        this.refuseFull(req, (answer) => writeAnswer(res, answer));
        return;
      }
      started = true;
      attempt(false);
    };
    if (body === null || req.readableLength > 0 || req.complete) start();
    else {
      req.once('data', start);
      req.once('end', start);
    }
  }
}
