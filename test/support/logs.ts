// A pino logger that keeps its JSON lines, for tests that check what is logged (and what never is).
import { Writable } from 'node:stream';

import { pino } from 'pino';

export interface CapturedLogs {
  readonly logger: pino.Logger;
  /** Every line so far, parsed. */
  lines(): Array<Record<string, unknown>>;
  /** Every byte so far, for "this never appears anywhere" checks. */
  raw(): string;
  /** The lines written while `act` ran. */
  during(act: () => Promise<unknown>): Promise<Array<Record<string, unknown>>>;
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
  const lines = () =>
    raw
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const during = async (act: () => Promise<unknown>) => {
    const before = lines().length;
    await act();
    return lines().slice(before);
  };
  return { logger, raw: () => raw, lines, during };
}
