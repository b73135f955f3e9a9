// How log lines are written: JSON (one object a line, for log shippers: production) or
// readable lines (pino-pretty: a person at a terminal). GATEHOUSE_LOG_FORMAT chooses; left
// unset, a terminal gets readable lines and anything else (a pipe, a file, a container's log
// driver) JSON, so that nothing a machine reads changes shape because of where it runs.

export const LOG_FORMATS = ['json', 'pretty'] as const;

export type LogFormat = (typeof LOG_FORMATS)[number];

export const LOG_FORMAT_VARIABLE = 'GATEHOUSE_LOG_FORMAT';

/**
 * The format `value` names (any case, blanks around it ignored); unset or empty is `pretty` when
 * `terminal`, else `json`. Anything else is a TypeError naming the variable and the formats.
 */
export function parseLogFormat(value: string | undefined, terminal: boolean): LogFormat {
  const format = (value ?? '').trim().toLowerCase();
  if (format === '') return terminal ? 'pretty' : 'json';
  if ((LOG_FORMATS as readonly string[]).includes(format)) return format as LogFormat;
  throw new TypeError(`${LOG_FORMAT_VARIABLE} must be one of ${LOG_FORMATS.join(', ')} (got ${JSON.stringify(value)})`);
}

/** GATEHOUSE_LOG_FORMAT's format, for output on stdout. */
export function logFormatFromEnv(): LogFormat {
  return parseLogFormat(process.env[LOG_FORMAT_VARIABLE], process.stdout.isTTY === true);
}
