import type { Logger } from '../logging.js';
import { logActiveCore, selectCore, type CoreSelection } from '../native/index.js';

/** The core this process decides with (the addon, else the TypeScript fallback), said in the log at start. */
export function activeCore(logger: Logger): CoreSelection {
  const selection = selectCore();
  logActiveCore(logger, selection);
  return selection;
}
