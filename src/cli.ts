#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { signatureHeader } from './webhook/sign.js';
import { startServer } from './sidecar/server.js';
import { DEFAULT_WEBHOOK_PATH } from './webhook/config.js';

const USAGE = `Usage:
  gatehouse serve [--host 127.0.0.1] [--port 8080]
      Run the server: the signed webhook receiver at ${DEFAULT_WEBHOOK_PATH}.
  gatehouse sign [--secret <secret>] [--file <path>]
      Print the X-Forge-Signature-256 value for a body read from --file or stdin.
      The secret defaults to $FORGE_WEBHOOK_SECRET.
  gatehouse help`;

class UsageError extends Error {}

function port(value: string | undefined): number {
  if (value === undefined) return 8080;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port must be 0-65535 (got ${value})`);
  return n;
}

async function serve(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { host: { type: 'string' }, port: { type: 'string' } } });
  const running = await startServer({ host: values.host ?? '127.0.0.1', port: port(values.port ?? process.env.PORT) });
  console.log(`gatehouse listening on ${running.url}`);
  console.log(`webhook receiver: POST ${running.url}${running.receiver.config.path}`);
  const stop = (): void => {
    running.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function sign(args: string[]): void {
  const { values } = parseArgs({ args, options: { secret: { type: 'string' }, file: { type: 'string' } } });
  const secret = values.secret ?? process.env.FORGE_WEBHOOK_SECRET ?? '';
  if (secret === '') throw new UsageError('no secret: pass --secret or set FORGE_WEBHOOK_SECRET');
  const body = readFileSync(values.file ?? 0); // fd 0: stdin, byte for byte
  process.stdout.write(`${signatureHeader(secret, body)}\n`);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(rest);
    case 'sign':
      return sign(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return;
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`gatehouse: ${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  console.error(`gatehouse: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
