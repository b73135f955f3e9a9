// Entry of the in-server mode, imported by binding/iis/boot.cjs inside the
// module's embedded Node. Logs go to GATEHOUSE_LOG_FILE (the worker process
// has no console). A start failure is logged, nothing attaches, and the module
// keeps answering every request 503 (fail closed) until the pool recycles.
import { AuthConfigError } from '../core/config/auth-config.js';
import { createLogger } from '../logging.js';
import { VERSION } from '../version.js';
import { startInServer } from './host.js';

const logger = createLogger(undefined, process.env.GATEHOUSE_LOG_FILE || undefined);

startInServer({ logger, version: VERSION }).catch((error: unknown) => {
  const problems = error instanceof AuthConfigError ? error.problems : [(error as Error).message];
  const ignored = error instanceof AuthConfigError && error.warnings.length > 0 ? { unknownKeys: error.warnings } : {};
  logger.fatal({ problems, ...ignored }, 'in-server: the auth core did not start');
  process.exitCode = 1;
});
