// A pino logger that keeps its JSON lines, for tests that check what is logged (and what never is).
import { Writable } from 'node:stream';

import { pino } from 'pino';

export interface CapturedLogs {
  readonly logger: pino.Logger;
  /** Every line so far, parsed. */
  lines(): Array<Record<string, unknown>>;
  /** Every byte so far, for "this never appears anywhere" checks. */
  raw(): string;
}

export function capturingLogger(level = 'info'): CapturedLogs {
  let raw = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw += chunk.toString('utf8');
      done();
    },
  });
  const logger = pino({ level }, stream);
  return { logger, raw: () => raw, lines: () => raw.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}
