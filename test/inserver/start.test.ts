// The in-server mode's start (src/inserver/host.ts) as the IIS module's
// embedded Node runs it, with the native module host standing in for the
// module: configuration, the auth core attached to the host link, bodies for
// the auth routes only, detach on close; and clear failures.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { expect } from 'chai';

import { AuthConfigError } from '../../src/core/config/auth-config.js';
import { startInServer, type InServer } from '../../src/inserver/host.js';
import type { NativeRequest } from '../../src/inserver/policy.js';
import { createLogger } from '../../src/logging.js';
import { loadModuleHost } from '../../src/native/module-host.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

function document(directory: string) {
  return {
    identityProviders: {
      customOpenIdConnectProviders: {
        corp: {
          registration: {
            clientId: 'app',
            clientCredential: { clientSecretSettingName: 'CORP_SECRET' },
            openIdConnectConfiguration: {
              authorizationEndpoint: 'https://idp.example/authorize',
              tokenEndpoint: 'https://idp.example/token',
              issuer: 'https://idp.example',
              certificationUri: 'https://idp.example/keys',
            },
          },
        },
      },
    },
    login: { tokenStore: { fileSystem: { directory } } },
  };
}

const request = (overrides: Partial<NativeRequest>): NativeRequest => ({
  method: 'GET',
  scheme: 'https',
  host: 'app.example',
  path: '/orders',
  query: '',
  remoteAddress: '10.0.0.1',
  headers: [
    ['Host', 'app.example'],
    ['Accept', 'text/html'],
  ],
  ...overrides,
});

describe('in-server start (the module’s embedded Node)', () => {
  const host = loadModuleHost();
  const logger = createLogger('silent');
  let running: InServer | undefined;
  afterEach(() => {
    running?.close();
    running = undefined;
  });

  it('attaches the configured auth core to the module: challenges, auth-route bodies, identity stripping; close detaches', async () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-inserver-'));
    const env = {
      GATEHOUSE_AUTH_CONFIG_JSON: JSON.stringify(document(directory)),
      CORP_SECRET: 's3cret',
      GATEHOUSE_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    };
    running = await startInServer({ logger, env, link: host.link });
    expect(host.attached()).to.equal(true);
    const [challenge, malformed, spoofed] = await host.replay(
      [
        request({}),
        request({
          method: 'POST',
          path: '/.auth/login/corp',
          headers: [
            ['Host', 'app.example'],
            ['Content-Type', 'application/json'],
            ['Accept', 'application/json'],
          ],
          body: Buffer.from('{"id_token":'),
        }),
        request({
          path: '/.auth/me',
          headers: [
            ['Host', 'app.example'],
            ['Accept', 'application/json'],
            ['X-PLATFORM-CLIENT-PRINCIPAL-ID', 'admin'],
          ],
        }),
      ],
      2,
    );
    expect(challenge).to.include({ completions: 1, kind: 'respond', status: 302 });
    expect(challenge!.headers!.find(([n]) => n.toLowerCase() === 'location')![1]).to.match(
      /^\/\.auth\/login\/corp\?post_login_redirect_uri=%2Forders$/,
    );
    expect(malformed).to.include({ kind: 'respond', status: 400, bodyPassed: true });
    expect(spoofed).to.include({ kind: 'respond', status: 401, bodyPassed: false });
    running.close();
    running = undefined;
    expect(host.attached()).to.equal(false);
  });

  it('a broken configuration fails the start with the JSON path, and attaches nothing', async () => {
    const env = {
      GATEHOUSE_AUTH_CONFIG_JSON: JSON.stringify({ globalValidation: { unauthenticatedClientAction: 'Sometimes' } }),
    };
    const error = await startInServer({ logger, env, link: host.link }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(AuthConfigError);
    expect((error as AuthConfigError).problems.join('\n')).to.include('globalValidation.unauthenticatedClientAction');
    expect(host.attached()).to.equal(false);
  });

  it('outside the module there is no host link: a clear error', async () => {
    const error = await startInServer({ logger, env: {} }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.message).to.match(/not running inside the gatehouse web-server module/);
  });

  /** Runs the module's boot script outside the module; its exit code and the fatal line it logged. */
  async function boot(
    env: NodeJS.ProcessEnv,
  ): Promise<{ outcome: number | undefined; fatal: { msg: string; problems?: string[] } | undefined }> {
    const log = path.join(mkdtempSync(path.join(os.tmpdir(), 'gatehouse-boot-')), 'gatehouse.log');
    const outcome = await promisify(execFile)(process.execPath, [path.join(ROOT, 'binding', 'iis', 'boot.cjs')], {
      env: { ...process.env, ...env, GATEHOUSE_LOG_FILE: log },
      timeout: 20_000,
    }).then(
      () => 0,
      (error: { code?: number }) => error.code,
    );
    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; msg: string; problems?: string[] });
    return { outcome, fatal: lines.find((line) => line.level === 60) };
  }

  it('the module’s boot script loads the built entry, which logs why it cannot start to GATEHOUSE_LOG_FILE', async () => {
    const { outcome, fatal } = await boot({});
    expect(outcome).to.equal(1);
    expect(fatal?.msg).to.equal('in-server: the auth core did not start');
    expect(fatal?.problems?.join()).to.match(/no gatehouse_host binding/);
  });

  it('an unknown GATEHOUSE_LOG_LEVEL is logged to GATEHOUSE_LOG_FILE as why it did not start', async () => {
    const { outcome, fatal } = await boot({ GATEHOUSE_LOG_LEVEL: 'verbose' });
    expect(outcome).to.equal(1);
    expect(fatal?.msg).to.equal('in-server: the auth core did not start');
    expect(fatal?.problems).to.deep.equal([
      'GATEHOUSE_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")',
    ]);
  });
});
