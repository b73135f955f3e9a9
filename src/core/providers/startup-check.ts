// At start, each OpenID provider's discovery document is fetched in the
// background, so that a provider gatehouse cannot reach is said at once, with
// its URL and the cause, instead of at the first sign-in. It never holds the
// start up (the provider may come up after gatehouse), and keeps trying with a
// growing pause until it succeeds, saying so once.
import type { Logger } from '../../logging.js';
import type { Provider } from './provider.js';

export interface StartupCheckOptions {
  /** The first pause before trying again (ms; default 5 s); it doubles up to `maxRetryMs`. */
  readonly firstRetryMs?: number;
  readonly maxRetryMs?: number;
}

export function checkProvidersAtStart(
  providers: Iterable<Provider>,
  logger: Logger,
  options: StartupCheckOptions = {},
): { stop(): void } {
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const first = options.firstRetryMs ?? 5_000;
  const max = options.maxRetryMs ?? 300_000;
  for (const provider of providers) {
    if (provider.prepare === undefined) continue;
    const prepare = provider.prepare.bind(provider);
    const attempt = (pauseMs: number, failedBefore: boolean): void => {
      prepare().then(
        () => {
          if (failedBefore && !stopped)
            logger.info(
              { provider: provider.alias },
              'identity provider reachable: its discovery document was fetched',
            );
        },
        (error: unknown) => {
          if (stopped) return;
          if (!failedBefore) {
            logger.warn(
              {
                provider: provider.alias,
                discovery: provider.discoveryUrl,
                reason: (error as Error).message,
                retryInMs: pauseMs,
              },
              'identity provider not reachable at start: its sign-ins fail until it is; trying again in the background',
            );
          }
          const timer = setTimeout(() => {
            timers.delete(timer);
            attempt(Math.min(pauseMs * 2, max), true);
          }, pauseMs);
          timer.unref();
          timers.add(timer);
        },
      );
    };
    attempt(first, false);
  }
  return {
    stop: () => {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
