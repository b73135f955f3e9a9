// The command line's pieces in process: the usage texts against the flags parseArgs takes, and
// the values of shared flags. The command run as a user runs it is cli.test.ts.
import { parseArgs } from 'node:util';

import { expect } from 'chai';

import { listenPort, portNumber, upstreamUrl } from '../../src/cli/flag-values.js';
import { receiverLine } from '../../src/cli/receiver-line.js';
import { metricsAddress } from '../../src/cli/serve-metrics.js';
import { COMMAND_OPTIONS, COMMAND_USAGE, USAGE, UsageError, usageLine, type Command } from '../../src/cli/usage.js';

const COMMANDS = Object.keys(COMMAND_OPTIONS) as Command[];

/** The `--flag` names a usage text mentions. */
function flagsIn(text: string): Set<string> {
  return new Set([...text.matchAll(/--([a-z][a-z-]*)/g)].map((match) => match[1]!));
}

/** The error parseArgs throws for `args` given `command`'s flags. */
function parseError(command: Command, args: string[]): Error & { code?: string } {
  try {
    parseArgs({ args, options: COMMAND_OPTIONS[command] });
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error(`parseArgs took ${args.join(' ')}`);
}

describe('gatehouse command line, in process', () => {
  describe('usage', () => {
    for (const command of COMMANDS) {
      it(`${command}: its usage names every flag it takes, and takes every flag its usage names`, () => {
        const taken = Object.keys(COMMAND_OPTIONS[command]);
        const named = flagsIn(COMMAND_USAGE[command]);
        named.delete('help');
        expect([...named].sort()).to.deep.equal([...taken].sort());
      });
    }

    it('the overall usage names every command and no flag that no command takes', () => {
      for (const command of COMMANDS) expect(USAGE).to.contain(`gatehouse ${command} `);
      const taken = new Set(['help', ...COMMANDS.flatMap((command) => Object.keys(COMMAND_OPTIONS[command]))]);
      expect([...flagsIn(USAGE)].filter((flag) => !taken.has(flag))).to.deep.equal([]);
    });

    it("a usage error's line: parseArgs' messages made short, a misspelt flag with the one it most likely meant", () => {
      expect(usageLine(parseError('serve', ['--metrics-prot', '9']), 'serve')).to.equal(
        'unknown option --metrics-prot (did you mean --metrics-port?)',
      );
      expect(usageLine(parseError('sign', ['-x']), 'sign')).to.equal('unknown option -x');
      expect(usageLine(parseError('dev', ['--public-host']), 'dev')).to.equal('--public-host <value> needs a value');
      expect(usageLine(parseError('sign', ['stray']), 'sign')).to.equal('unexpected argument stray');
      // An unknown command has no flags to pick from.
      expect(usageLine(parseError('serve', ['--hots']), 'nonsense')).to.equal('unknown option --hots');
      expect(usageLine(new UsageError('as given'), 'serve')).to.equal('as given');
    });
  });

  describe('flag values', () => {
    const savedPort = process.env.PORT;
    afterEach(() => {
      if (savedPort === undefined) delete process.env.PORT;
      else process.env.PORT = savedPort;
    });

    it('the port: --port, else PORT, else 8080; an empty PORT is unset, an empty --port is not', () => {
      process.env.PORT = '9000';
      expect(listenPort('7000')).to.equal(7000);
      expect(listenPort(undefined)).to.equal(9000);
      process.env.PORT = '';
      expect(listenPort(undefined)).to.equal(8080);
      delete process.env.PORT;
      expect(listenPort(undefined)).to.equal(8080);
      expect(() => listenPort('')).to.throw(UsageError, '--port must be a port number, 0-65535 (got "")');
    });

    it('a port is decimal digits, five at most, 0-65535, and its error names where it came from', () => {
      expect(portNumber('--port', '0')).to.equal(0);
      expect(portNumber('--port', '65535')).to.equal(65535);
      for (const bad of ['65536', '000080', '-1', '+80', '8e3', '0x50', ' 80', '80.0'])
        expect(() => portNumber('PORT', bad), bad).to.throw(
          UsageError,
          `PORT must be a port number, 0-65535 (got ${JSON.stringify(bad)})`,
        );
    });

    it('--upstream is an origin: a trailing slash is fine, a path, credentials or another scheme are usage errors', () => {
      expect(upstreamUrl('http://127.0.0.1:3000/')).to.equal('http://127.0.0.1:3000');
      expect(upstreamUrl('https://app.example')).to.equal('https://app.example');
      expect(() => upstreamUrl('http://127.0.0.1:3000/app')).to.throw(
        UsageError,
        /^--upstream must be the app's origin/,
      );
      expect(() => upstreamUrl('http://user:pw@127.0.0.1:3000')).to.throw(UsageError, /must not carry credentials/);
      expect(() => upstreamUrl('ftp://x')).to.throw(UsageError, /^--upstream must be an http\(s\) URL/);
    });

    it('--metrics-host needs --metrics-port; the metrics listen on loopback unless told otherwise', () => {
      expect(metricsAddress(undefined, undefined)).to.equal(undefined);
      expect(metricsAddress('9464', undefined)).to.deep.equal({ host: '127.0.0.1', port: 9464 });
      expect(metricsAddress('9464', '0.0.0.0')).to.deep.equal({ host: '0.0.0.0', port: 9464 });
      expect(() => metricsAddress(undefined, '0.0.0.0')).to.throw(UsageError, '--metrics-host needs --metrics-port');
      expect(() => metricsAddress('metrics', undefined)).to.throw(UsageError, /^--metrics-port must be a port number/);
    });
  });

  it("the webhook receiver's start line: where to POST, that it answers 500 without a secret, where deliveries go on", () => {
    const config = { path: '/webhooks', secrets: [], secretVariable: 'FORGE_WEBHOOK_SECRET', forwardPath: '/hooks' };
    expect(receiverLine('http://127.0.0.1:8080', config)).to.equal(
      'webhook receiver: POST http://127.0.0.1:8080/webhooks (not configured: answers 500 until FORGE_WEBHOOK_SECRET is set)',
    );
    expect(receiverLine('http://127.0.0.1:8080', { ...config, secrets: ['s'] }, 'http://127.0.0.1:3000')).to.equal(
      'webhook receiver: POST http://127.0.0.1:8080/webhooks; verified deliveries go on to http://127.0.0.1:3000/hooks',
    );
  });
});
