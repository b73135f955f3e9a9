// Starting the auth core: a token store directory that cannot be used stops the start with an
// error that names the directory and the setting, instead of failing every sign-in later.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';
import { pino } from 'pino';

import { startAuthRuntime, TokenStoreDirectoryError } from '../../src/core/auth-runtime.js';
import { resolveAuthConfig } from '../../src/core/config/auth-config.js';
import { KEY_FILE_NAME } from '../../src/core/token-store/filesystem-key-file.js';
import { fallbackCore } from '../../src/native/index.js';
import { capturingLogger } from '../support/logs.js';

const silent = pino({ level: 'silent' });

function configWithStore(directory: string) {
  return resolveAuthConfig(
    {
      identityProviders: {
        customOpenIdConnectProviders: {
          corp: {
            registration: {
              clientId: 'c',
              openIdConnectConfiguration: {
                wellKnownOpenIdConfiguration: 'https://idp.example/.well-known/openid-configuration',
              },
            },
          },
        },
      },
      login: { tokenStore: { enabled: true, fileSystem: { directory } } },
    },
    {},
  ).config;
}

async function startFails(directory: string, env: NodeJS.ProcessEnv): Promise<Error> {
  try {
    const runtime = await startAuthRuntime({
      headers: fallbackCore,
      config: configWithStore(directory),
      logger: silent,
      env,
    });
    runtime.close();
  } catch (error) {
    return error as Error;
  }
  expect.fail(`expected the start to fail for ${directory}`);
}

describe('auth runtime start', () => {
  let base: string;
  beforeEach(async () => {
    base = await fs.mkdtemp(path.join(os.tmpdir(), 'gatehouse-runtime-'));
  });
  afterEach(() => fs.rm(base, { recursive: true, force: true }));

  it('a store directory that cannot be created fails the start, naming the directory and the setting (key file or key from the environment)', async () => {
    const file = path.join(base, 'a-file');
    await fs.writeFile(file, 'not a directory');
    const directory = path.join(file, 'tokens');
    for (const env of [{}, { GATEHOUSE_ENCRYPTION_KEY: randomBytes(32).toString('hex') }]) {
      const error = await startFails(directory, env);
      expect(error).to.be.instanceOf(TokenStoreDirectoryError);
      expect(error.message).to.contain(
        `the token store directory ${directory} (login.tokenStore.fileSystem.directory) cannot be used`,
      );
      expect(error.message).to.contain('ENOTDIR');
    }
  });

  it('a usable directory: the app directory and key file are made at start, and the write probe leaves nothing behind', async () => {
    const directory = path.join(base, 'tokens');
    const runtime = await startAuthRuntime({
      headers: fallbackCore,
      config: configWithStore(directory),
      logger: silent,
      env: {},
    });
    runtime.close();
    const entries = await fs.readdir(directory);
    expect(entries).to.include(KEY_FILE_NAME);
    const appDirectories = entries.filter((name) => name.startsWith('app-'));
    expect(appDirectories).to.have.length(1);
    expect(await fs.readdir(path.join(directory, appDirectories[0]!))).to.deep.equal([]);
  });

  it('the default directory (none configured) is said at start, with a .gitignore beside it so the key never lands in a commit', async () => {
    const cwd = process.cwd();
    process.chdir(base);
    try {
      const logs = capturingLogger();
      const config = resolveAuthConfig(
        {
          identityProviders: {
            customOpenIdConnectProviders: {
              corp: {
                registration: {
                  clientId: 'c',
                  openIdConnectConfiguration: {
                    wellKnownOpenIdConfiguration: 'https://idp.example/.well-known/openid-configuration',
                  },
                },
              },
            },
          },
        },
        {},
      ).config;
      const runtime = await startAuthRuntime({ headers: fallbackCore, config, logger: logs.logger, env: {} });
      await runtime.close();
      const said = logs.lines().find((l) => String(l.msg).startsWith('token store: the default directory'));
      expect(said).to.include({ directory: path.join(base, '.gatehouse', 'tokens') });
      expect(await fs.readFile(path.join(base, '.gatehouse', '.gitignore'), 'utf8')).to.match(/^\*$/m);
      expect(await fs.readdir(path.join(base, '.gatehouse', 'tokens'))).to.include(KEY_FILE_NAME);
    } finally {
      process.chdir(cwd);
    }
  });

  it('a key file deleted alone is an error at the next start, naming the file and how many stored sessions it ends; a first start says nothing', async () => {
    const directory = path.join(base, 'tokens');
    const errors = async () => {
      const logs = capturingLogger('info');
      const runtime = await startAuthRuntime({
        headers: fallbackCore,
        config: configWithStore(directory),
        logger: logs.logger,
        env: {},
      });
      runtime.close();
      return { lines: logs.lines().filter((line) => line.level === 50) };
    };
    expect((await errors()).lines).to.deep.equal([]); // the first start makes the key file
    const appDirectory = (await fs.readdir(directory)).find((name) => name.startsWith('app-'))!;
    for (const name of ['a', 'b'])
      await fs.writeFile(path.join(directory, appDirectory, `${name.repeat(64)}.session`), '{}');
    expect((await errors()).lines).to.deep.equal([]); // the key file is there: nothing lost
    await fs.rm(path.join(directory, KEY_FILE_NAME));
    const { lines } = await errors();
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({
      file: path.join(directory, KEY_FILE_NAME),
      records: 2,
      msg: 'token store key file was missing and has been created anew: the sessions stored with the old key cannot be read and have ended',
    });
  });

  it('authentication turned off (platform.enabled: false) is a warning at every start; on, it is not', async () => {
    const directory = path.join(base, 'tokens');
    const warnings = async (enabled: boolean) => {
      const logs = capturingLogger('info');
      const { config } = resolveAuthConfig(
        {
          platform: { enabled },
          globalValidation: { requireAuthentication: false },
          login: { tokenStore: { fileSystem: { directory } } },
        },
        {},
      );
      const runtime = await startAuthRuntime({ headers: fallbackCore, config, logger: logs.logger, env: {} });
      runtime.close();
      return logs
        .lines()
        .filter((line) => line.level === 40)
        .map((line) => line.msg);
    };
    expect(await warnings(false)).to.deep.equal([
      'authentication is off (platform.enabled: false): every request reaches the app anonymously; inbound identity headers are still stripped',
    ]);
    expect(await warnings(true)).to.deep.equal([]);
  });
});
