// What the command line accepts and says about itself: each command's usage and flags, the
// overall usage, and a usage error's one line.
import type { ParseArgsConfig } from 'node:util';

import { didYouMean } from '../core/closest-name.js';
import { DEFAULT_WEBHOOK_PATH } from '../webhook/config.js';

/** Each command's usage: its options, the environment it reads, an example. */
export const COMMAND_USAGE = {
  dev: `Usage:
  gatehouse dev [--host 127.0.0.1] [--port 8080] [--upstream <url>] [--public-host <name>]
      Zero-configuration demo: a development OpenID provider, a demo app, and
      gatehouse in front of it. Sign in as demo / demo.

Options:
  --upstream <url>      your own app instead of the demo, every path of it protected
  --host <address>      where to listen (default 127.0.0.1; 0.0.0.0 for other machines
                        or a container's host: the provider then listens there too, on
                        the next port)
  --port <n>            where to listen (default $PORT, else 8080; npm start --port <n>)
  --public-host <name>  the name browsers use for this machine, with a --host beyond
                        loopback (default: the --host address, or for 0.0.0.0 this
                        machine's first non-loopback IPv4 address)

Environment:
  GATEHOUSE_LOG_FORMAT  json or pretty (default here: pretty)
  GATEHOUSE_LOG_LEVEL   fatal, error, warn, info (default), debug, trace, silent

Example:
  gatehouse dev --upstream http://localhost:3000`,
  serve: `Usage:
  gatehouse serve --upstream <url> [--config <file>] [--host 127.0.0.1] [--port 8080]
                  [--workers N|auto] [--metrics-port N] [--metrics-host 127.0.0.1]
      The sidecar: authenticate every request, forward to <url> with identity
      headers. The webhook receiver is at ${DEFAULT_WEBHOOK_PATH}.
  gatehouse serve --forward-auth [--config <file>] [--host 127.0.0.1] [--port 8080] ...
      No app behind gatehouse: a web server in front (nginx, Caddy, Traefik) proxies
      to the app and asks GET /.auth/verify; gatehouse serves /.auth/* on the app's origin.
  gatehouse serve [--host 127.0.0.1] [--port 8080] [--workers N|auto] [--metrics-port N]
      Without --upstream: only the signed webhook receiver.

Options:
  --upstream <url>        the app to protect (http:// or https://, an origin)
  --config <file>         the authsettingsV2 document (JSON)
  --forward-auth          serve /.auth/* and /.auth/verify for a web server in front
  --host <address>        where to listen (default 127.0.0.1)
  --port <n>              where to listen (default $PORT, else 8080)
  --workers <N|auto>      processes sharing the port (auto: one per usable CPU)
  --metrics-port <n>      Prometheus metrics at GET /metrics on a listener of their own
  --metrics-host <addr>   where that listener listens (default 127.0.0.1)

Environment:
  GATEHOUSE_AUTH_CONFIG_JSON, WEBSITE_AUTH_V2_CONFIG_JSON
                          the document itself, when --config is not given
  GATEHOUSE_ENCRYPTION_KEY
                          the token store's key, 32 bytes as 64 hex digits or base64 (else a
                          key file in the store directory, .gatehouse/tokens by default)
  GATEHOUSE_REDIS_URL     sessions in Redis, shared by every instance (redis://, rediss://)
  GATEHOUSE_TRUSTED_PROXIES
                          who may ask /.auth/verify (default loopback)
  FORGE_WEBHOOK_SECRET    the webhook receiver's secret
  GATEHOUSE_LOG_FORMAT    json or pretty (default: pretty on a terminal, else json)
  GATEHOUSE_LOG_LEVEL     fatal, error, warn, info (default), debug, trace, silent
  PORT                    the port, when --port is not given

Example:
  gatehouse serve --upstream http://127.0.0.1:3000 --config auth.json --port 8080`,
  sign: `Usage:
  gatehouse sign [--secret <secret>] [--file <path>]
      Print the X-Forge-Signature-256 value for a body read from --file or stdin.

Options:
  --secret <secret>   the webhook secret (default $FORGE_WEBHOOK_SECRET)
  --file <path>       the body (default: stdin, byte for byte)

Example:
  echo -n '{"ref":"refs/heads/main"}' | gatehouse sign --secret s3cret`,
} as const;

export type Command = keyof typeof COMMAND_USAGE;

/** Each command's flags: what parseArgs takes, and the names "did you mean" picks from. */
export const COMMAND_OPTIONS = {
  dev: {
    host: { type: 'string' },
    port: { type: 'string' },
    upstream: { type: 'string' },
    'public-host': { type: 'string' },
  },
  serve: {
    host: { type: 'string' },
    port: { type: 'string' },
    upstream: { type: 'string' },
    config: { type: 'string' },
    workers: { type: 'string' },
    'metrics-port': { type: 'string' },
    'metrics-host': { type: 'string' },
    'forward-auth': { type: 'boolean' },
  },
  sign: { secret: { type: 'string' }, file: { type: 'string' } },
} as const satisfies Record<Command, NonNullable<ParseArgsConfig['options']>>;

export function isCommand(name: string | undefined): name is Command {
  return name !== undefined && Object.hasOwn(COMMAND_USAGE, name);
}

export const USAGE = `Usage:
  gatehouse dev [--host 127.0.0.1] [--port 8080] [--upstream <url>]
      Zero-configuration demo: a development OpenID provider, a demo app, and
      gatehouse in front of it. Sign in as demo / demo. With --upstream, your
      own app instead of the demo, every path of it protected.
  gatehouse serve --upstream <url> [--config <file>] [--host 127.0.0.1] [--port 8080]
                  [--workers N|auto] [--metrics-port N] [--metrics-host 127.0.0.1]
      The sidecar: authenticate every request, forward to <url> with identity
      headers. The webhook receiver is at ${DEFAULT_WEBHOOK_PATH}.
  gatehouse serve --forward-auth [--config <file>] [--host 127.0.0.1] [--port 8080] ...
      No app behind gatehouse: a web server in front (nginx, Caddy, Traefik) asks
      GET /.auth/verify; gatehouse serves /.auth/* on the app's origin.
  gatehouse serve [--host 127.0.0.1] [--port 8080] [--workers N|auto] [--metrics-port N]
      Without --upstream: only the signed webhook receiver.
  gatehouse sign [--secret <secret>] [--file <path>]
      Print the X-Forge-Signature-256 value for a body read from --file or stdin.
  gatehouse version | help

gatehouse <command> --help prints a command's options, environment and an example.`;

/** A mistake in the command line: said in one line, exit 2 (src/cli.ts). */
export class UsageError extends Error {}

/** A usage error's one line: parseArgs' own messages made short, an unknown flag with the one it most likely meant. */
export function usageLine(error: Error & { code?: string }, command: string | undefined): string {
  const flags = isCommand(command) ? Object.keys(COMMAND_OPTIONS[command]) : [];
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const typed = /'(-{1,2}[^']*)'/.exec(error.message)?.[1] ?? '';
    return `unknown option ${typed}${didYouMean(typed.replace(/^-+/, ''), flags, (name) => `--${name}`)}`;
  }
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
    return error.message.replace(/^Option '([^']*)'.*argument missing$/, '$1 needs a value');
  if (error.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
    return error.message.replace(/^Unexpected argument '([^']*)'.*$/, 'unexpected argument $1');
  return error.message;
}
