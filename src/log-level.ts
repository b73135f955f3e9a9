// The log level, read with the setting's name in its error. Left to pino, an unknown level
// ("verbose", "30", or an empty GATEHOUSE_LOG_LEVEL) stops the start with pino's own message,
// "default level:verbose must be included in custom levels", which names neither the variable
// nor the levels there are.

/** pino's levels, most severe first, and `silent` (no logs). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export type LogLevel = (typeof LOG_LEVELS)[number];

export const LOG_LEVEL_VARIABLE = 'GATEHOUSE_LOG_LEVEL';

export const DEFAULT_LOG_LEVEL: LogLevel = 'info';

function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/**
 * The level `value` names, in any case and with surrounding blanks (as GATEHOUSE_NATIVE is read);
 * unset or empty is the default. Anything else is a TypeError naming `source` and the levels.
 */
export function parseLogLevel(value: string | undefined, source: string = LOG_LEVEL_VARIABLE): LogLevel {
  const level = (value ?? '').trim().toLowerCase();
  if (level === '') return DEFAULT_LOG_LEVEL;
  if (isLogLevel(level)) return level;
  throw new TypeError(`${source} must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(value)})`);
}

/** GATEHOUSE_LOG_LEVEL's level. */
export function logLevelFromEnv(env: NodeJS.ProcessEnv = process.env): LogLevel {
  return parseLogLevel(env[LOG_LEVEL_VARIABLE]);
}
