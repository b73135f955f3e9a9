// `gatehouse dev`: the zero-configuration demo (a development provider, a demo app or the user's
// own, gatehouse in front), and the lines that tell a person where to go.
import { parseArgs } from 'node:util';

import { loadDev } from '../dev/load.js';
import { LOG_FORMAT_VARIABLE } from '../log-format.js';
import { createLogger } from '../logging.js';
import { VERSION } from '../version.js';
import { activeCore } from './active-core.js';
import { listenPort, upstreamUrl } from './flag-values.js';
import { stopOn } from './graceful-stop.js';
import { receiverLine } from './receiver-line.js';
import { COMMAND_OPTIONS, UsageError } from './usage.js';

/**
 * `npm start --port 9000`: npm takes --port as its own setting and hands it on as npm_config_port,
 * so the flag reaches dev that way (only when npm runs the start script: any other npm_config_port
 * is npm's business).
 */
function npmStartPort(): string | undefined {
  return process.env.npm_lifecycle_event === 'start' ? process.env.npm_config_port || undefined : undefined;
}

export async function dev(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: COMMAND_OPTIONS.dev });
  const upstream = values.upstream !== undefined ? upstreamUrl(values.upstream) : undefined;
  // A person runs dev: readable lines, unless GATEHOUSE_LOG_FORMAT asks otherwise.
  const logger = createLogger(undefined, undefined, process.env[LOG_FORMAT_VARIABLE]?.trim() ? undefined : 'pretty');
  const { core } = activeCore(logger);
  // Loaded only here: the development provider (oidc-provider) is no part of serve.
  const { startDev } = await loadDev();
  const publicHost = values['public-host'];
  if (publicHost !== undefined && !/^[A-Za-z0-9.:_-]+$/.test(publicHost))
    throw new UsageError(`--public-host must be a host name or address (got ${JSON.stringify(publicHost)})`);
  const running = await startDev({
    host: values.host ?? '127.0.0.1',
    port: listenPort(values.port ?? npmStartPort()),
    core,
    logger,
    version: VERSION,
    ...(upstream !== undefined ? { upstream } : {}),
    ...(publicHost !== undefined ? { publicHost } : {}),
  });
  stopOn(logger, running.close);
  const target = upstream !== undefined ? ` (your app at ${upstream}, every path protected)` : '';
  console.log(`gatehouse dev: open ${running.url}/ and sign in as demo / demo${target}`);
  if (running.listeningBeyondLoopback !== undefined) {
    console.log(
      `listening on ${running.listeningBeyondLoopback}, the development provider on port ${running.providerPortBeyondLoopback}: ` +
        `browsers elsewhere open ${running.url}/ (--public-host names this machine otherwise; publish both ports from a container)`,
    );
    console.log(
      'anyone who can reach these ports can sign in as the development users (demo / demo has the admin role): a development tool, not a deployment',
    );
  }
  console.log(`development OpenID provider: ${running.issuer}`);
  console.log(
    receiverLine(
      running.url,
      running.receiver.config,
      upstream !== undefined && running.receiver.forwarding ? upstream : undefined,
    ),
  );
}
