// Failures of the app, logged without flooding: while the app is down every request fails the
// same way (about 1,500 lines a second at a modest load). The first failure of each kind is
// logged as it happens; the same kind again within the interval is only counted, and the count
// is logged once the interval is over ("…: N more in the last 10 s"), so a down app costs a line
// or two every ten seconds whatever the load, and a failure that stops is still accounted for.
import type { Logger } from '../logging.js';

/** How long repeats of one kind of failure are counted before the count is logged. */
export const FAILURE_SUMMARY_INTERVAL_MS = 10_000;

interface Window {
  suppressed: number;
}

export class FailureSummary {
  readonly #windows = new Map<string, Window>();

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs = FAILURE_SUMMARY_INTERVAL_MS,
  ) {}

  /** Logs `fields` with `msg` at error level, unless the same `kind` was logged within the interval (then it is counted). */
  error(kind: string, fields: Record<string, unknown>, msg: string): void {
    const window = this.#windows.get(kind);
    if (window !== undefined) {
      window.suppressed += 1;
      return;
    }
    this.logger.error(fields, msg);
    const opened: Window = { suppressed: 0 };
    this.#windows.set(kind, opened);
    setTimeout(() => {
      this.#windows.delete(kind);
      const { suppressed } = opened;
      if (suppressed > 0)
        this.logger.error(
          { reason: kind, repeats: suppressed, intervalMs: this.intervalMs },
          `${msg}: ${suppressed} more of the same in the last ${this.intervalMs / 1000} s`,
        );
    }, this.intervalMs).unref();
  }
}
