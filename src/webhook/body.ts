import type { Readable } from 'node:stream';

export type BodyFailure = 'too-large' | 'timeout' | 'aborted' | 'bad-length';

export class BodyReadError extends Error {
  constructor(readonly failure: BodyFailure) {
    super(`request body: ${failure}`);
    this.name = 'BodyReadError';
  }
}

export interface BodyLimits {
  readonly limitBytes: number;
  /** Idle time allowed between two chunks. */
  readonly timeoutMs: number;
  /**
   * Time allowed for the whole body (default: none). The idle timeout alone lets a client that
   * sends a byte now and then hold the request, and what it has sent, for as long as it likes.
   */
  readonly deadlineMs?: number;
  /** The Content-Length header, if any. */
  readonly declaredLength?: string | undefined;
}

/**
 * Reads the raw body bytes exactly as sent. Never reads past `limitBytes`:
 * an oversized declared length fails before a byte is read, and an undeclared
 * (chunked) body fails as soon as it crosses the limit. With a declared length
 * the bytes land in one buffer of that size, so a 25 MiB body costs 25 MiB;
 * a body that arrives in a single chunk is not copied at all.
 */
export function readRawBody(stream: Readable, limits: BodyLimits): Promise<Buffer> {
  let declared: number | undefined;
  if (limits.declaredLength !== undefined) {
    if (!/^\d+$/.test(limits.declaredLength)) return Promise.reject(new BodyReadError('bad-length'));
    declared = Number(limits.declaredLength);
    if (declared > limits.limitBytes) return Promise.reject(new BodyReadError('too-large'));
  }

  return new Promise<Buffer>((resolve, reject) => {
    const limit = declared ?? limits.limitBytes;
    // A body that arrives in one chunk is used as is; a longer one is gathered
    // into a single buffer of the declared size (or concatenated at the end
    // when the size is unknown).
    let first: Buffer | undefined;
    let whole: Buffer | undefined;
    let chunks: Buffer[] | undefined;
    let received = 0;
    let settled = false;
    const started = Date.now();
    const deadlineAt = started + (limits.deadlineMs ?? Infinity);
    let lastActivity = started;
    // One timer for both limits, re-armed lazily: cheaper than a timer per chunk.
    const onTimeCheck = (): void => {
      const now = Date.now();
      const due = Math.min(lastActivity + limits.timeoutMs, deadlineAt);
      if (now >= due) fail('timeout');
      else timer = setTimeout(onTimeCheck, due - now);
    };
    let timer: NodeJS.Timeout = setTimeout(onTimeCheck, Math.min(limits.timeoutMs, deadlineAt - started));

    const cleanup = (): void => {
      clearTimeout(timer);
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
    };
    const fail = (failure: BodyFailure): void => {
      if (settled) return;
      settled = true;
      cleanup();
      stream.pause(); // read no further
      reject(new BodyReadError(failure));
    };
    const onData = (chunk: Buffer): void => {
      if (received + chunk.length > limit) {
        fail(declared === undefined ? 'too-large' : 'bad-length');
        return;
      }
      lastActivity = Date.now();
      if (first === undefined) {
        first = chunk;
      } else if (declared !== undefined) {
        if (whole === undefined) {
          whole = Buffer.allocUnsafe(declared);
          first.copy(whole, 0);
        }
        chunk.copy(whole, received);
      } else {
        (chunks ??= [first]).push(chunk);
      }
      received += chunk.length;
    };
    const onEnd = (): void => {
      if (settled) return;
      if (declared !== undefined && received !== declared) {
        fail('bad-length');
        return;
      }
      settled = true;
      cleanup();
      if (whole !== undefined) resolve(whole);
      else if (chunks !== undefined) resolve(Buffer.concat(chunks, received));
      else resolve(first ?? Buffer.alloc(0));
    };
    const onError = (): void => fail('aborted');
    const onClose = (): void => fail('aborted');

    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}
