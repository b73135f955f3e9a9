// The values of the flags several commands share, checked: a port and the app's URL. A value
// that does not fit is a usage error naming the flag (or variable) it came from.
import { parseUpstreamUrl } from '../sidecar/upstream-url.js';
import { wholeNumber } from '../whole-number.js';
import { UsageError } from './usage.js';

/** The port to listen on: --port, else PORT (an empty PORT counts as unset), else 8080. */
export function listenPort(flag: string | undefined): number {
  const [source, value] = flag !== undefined ? ['--port', flag] : ['PORT', process.env.PORT];
  if (value === undefined || (source === 'PORT' && value === '')) return 8080;
  return portNumber(source, value);
}

/** A port as given: decimal digits only (wholeNumber), five at most, 0-65535. */
export function portNumber(source: string, value: string): number {
  const port = wholeNumber(value);
  if (value.length > 5 || Number.isNaN(port) || port > 65535)
    throw new UsageError(`${source} must be a port number, 0-65535 (got ${JSON.stringify(value)})`);
  return port;
}

/** --upstream: the origin of the app to protect. */
export function upstreamUrl(value: string): string {
  const parsed = parseUpstreamUrl(value);
  if ('problem' in parsed) throw new UsageError(`--upstream ${parsed.problem}`);
  return parsed.origin;
}
