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
  /** The Content-Length header, if any. */
  readonly declaredLength?: string | undefined;
}

/**
 * Reads the raw body bytes exactly as sent. Never reads past `limitBytes`:
 * an oversized declared length fails before a byte is read, and an undeclared
 * (chunked) body fails as soon as it crosses the limit. With a declared length
 * the bytes land in one buffer of that size, so a 25 MiB body costs 25 MiB.
 */
export function readRawBody(stream: Readable, limits: BodyLimits): Promise<Buffer> {
  let declared: number | undefined;
  if (limits.declaredLength !== undefined) {
    if (!/^\d+$/.test(limits.declaredLength)) return Promise.reject(new BodyReadError('bad-length'));
    declared = Number(limits.declaredLength);
    if (declared > limits.limitBytes) return Promise.reject(new BodyReadError('too-large'));
  }

  return new Promise<Buffer>((resolve, reject) => {
    const whole = declared === undefined ? undefined : Buffer.allocUnsafe(declared);
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;

    const cleanup = (): void => {
      if (timer !== undefined) clearTimeout(timer);
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
    const armTimer = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      timer = setTimeout(() => fail('timeout'), limits.timeoutMs);
    };
    const onData = (chunk: Buffer): void => {
      if (received + chunk.length > (declared ?? limits.limitBytes)) {
        fail(declared === undefined ? 'too-large' : 'bad-length');
        return;
      }
      if (whole !== undefined) chunk.copy(whole, received);
      else chunks.push(chunk);
      received += chunk.length;
      armTimer();
    };
    const onEnd = (): void => {
      if (settled) return;
      if (declared !== undefined && received !== declared) {
        fail('bad-length');
        return;
      }
      settled = true;
      cleanup();
      resolve(whole ?? (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)));
    };
    const onError = (): void => fail('aborted');
    const onClose = (): void => fail('aborted');

    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
    armTimer();
  });
}
