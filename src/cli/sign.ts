import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { signatureHeader } from '../webhook/sign.js';
import { COMMAND_OPTIONS, UsageError } from './usage.js';

/** `gatehouse sign`: the signature header value a sender of `--file` (or stdin) would send. */
export function sign(args: string[]): void {
  const { values } = parseArgs({ args, options: COMMAND_OPTIONS.sign });
  const secret = values.secret ?? process.env.FORGE_WEBHOOK_SECRET ?? '';
  if (secret === '') throw new UsageError('no secret: pass --secret or set FORGE_WEBHOOK_SECRET');
  const body = readFileSync(values.file ?? 0); // fd 0: stdin, byte for byte
  process.stdout.write(`${signatureHeader(secret, body)}\n`);
}
