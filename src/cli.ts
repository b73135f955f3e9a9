#!/usr/bin/env node
// The `gatehouse` command: picks the command (src/cli/), and turns what went wrong into one line
// and an exit code (2 for a usage error, 1 for any other).
import { AuthConfigError } from './core/config/auth-config.js';
import { didYouMean } from './core/closest-name.js';
import { dev } from './cli/dev.js';
import { serve } from './cli/serve.js';
import { sign } from './cli/sign.js';
import { COMMAND_USAGE, isCommand, USAGE, UsageError, usageLine } from './cli/usage.js';
import { VERSION } from './version.js';

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  // `gatehouse serve --help` asks for that command's usage, as it would of any command-line tool.
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(isCommand(command) ? COMMAND_USAGE[command] : USAGE);
    return;
  }
  switch (command) {
    case 'dev':
      return dev(rest);
    case 'serve':
      return serve(rest);
    case 'sign':
      return sign(rest);
    case 'version':
    case '--version':
      console.log(VERSION);
      return;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return;
    default:
      throw new UsageError(
        `unknown command: ${command}${didYouMean(command, [...Object.keys(COMMAND_USAGE), 'version', 'help'], (name) => name)}`,
      );
  }
}

// The reader of stdout may go away (a log shipper that died, `| head`). What is printed there is
// then lost, which must not crash the server: node reports a failed write to a closed pipe as an
// 'error' event, fatal when nothing listens. (Log lines go through pino, which stops on EPIPE.)
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    // One line and where to look: the whole usage buries the line that says what was wrong.
    const command = process.argv[2];
    const help = isCommand(command) ? `gatehouse ${command} --help` : 'gatehouse help';
    console.error(`gatehouse: ${usageLine(error as Error, command)}\n(${help} lists the options)`);
    process.exit(2);
  }
  if (error instanceof AuthConfigError) {
    console.error(`gatehouse: ${error.message}`);
    process.exit(1);
  }
  const listenError = error as NodeJS.ErrnoException & { address?: string; port?: number };
  if (listenError.syscall === 'listen' && listenError.code === 'EADDRINUSE') {
    console.error(
      `gatehouse: ${listenError.address}:${listenError.port} is already in use: pass --port <n> (or set PORT) to listen elsewhere`,
    );
    process.exit(1);
  }
  console.error(`gatehouse: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
