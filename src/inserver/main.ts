// Entry of the in-server mode, imported by binding/iis/boot.cjs inside the
// module's embedded Node. Logs go to GATEHOUSE_LOG_FILE (the worker process
// has no console). A start failure is logged, nothing attaches, and Node ends
// once the line is written: the module answers 503 (fail closed) and asks IIS
// for a new worker process (docs/in-server-module.md).
import { AuthConfigError } from '../core/config/auth-config.js';
import { DEFAULT_LOG_LEVEL } from '../log-level.js';
import { createLogger, flushLogs, type Logger } from '../logging.js';
import { VERSION } from '../version.js';
import { startInServer } from './host.js';

const file = process.env.GATEHOUSE_LOG_FILE || undefined;

function refuseToStart(logger: Logger, error: unknown): void {
  const problems = error instanceof AuthConfigError ? error.problems : [(error as Error).message];
  const ignored = error instanceof AuthConfigError && error.warnings.length > 0 ? { ignored: error.warnings } : {};
  const source = error instanceof AuthConfigError && error.source !== undefined ? { source: error.source } : {};
  logger.fatal({ problems, ...ignored, ...source }, 'in-server: the auth core did not start');
  // The module's handle keeps Node's loop alive: only an exit tells the module Node has ended.
  void flushLogs(logger).then(() => process.exit(1));
}

let logger: Logger | undefined;
try {
  logger = createLogger(undefined, file);
} catch (error) {
  // An unknown GATEHOUSE_LOG_LEVEL: the log file is the only place anyone would look for why.
  refuseToStart(createLogger(DEFAULT_LOG_LEVEL, file), error);
}
if (logger !== undefined) {
  const started = logger;
  startInServer({ logger: started, version: VERSION }).catch((error: unknown) => refuseToStart(started, error));
}
