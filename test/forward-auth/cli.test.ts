// `gatehouse serve --forward-auth`, as a user starts it: what it says, and what it refuses.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { CLI, root, serve } from '../support/cli-process.js';

describe('gatehouse serve --forward-auth', function () {
  this.timeout(30_000);
  const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-fa-cli-'));
  after(() => rmSync(directory, { recursive: true, force: true }));
  // A provider that is never reached: nothing here signs in.
  const env = {
    GATEHOUSE_AUTH_CONFIG_JSON: JSON.stringify({
      identityProviders: {
        customOpenIdConnectProviders: {
          dev: {
            registration: {
              clientId: 'x',
              clientCredential: { clientSecretSettingName: 'S' },
              openIdConnectConfiguration: {
                wellKnownOpenIdConfiguration: 'http://127.0.0.1:9/.well-known/openid-configuration',
              },
            },
          },
        },
      },
      globalValidation: { excludedPaths: ['/public/*'] },
      login: { tokenStore: { fileSystem: { directory } } },
    }),
    S: 'x',
    GATEHOUSE_ENCRYPTION_KEY: 'ab'.repeat(32),
    GATEHOUSE_LOG_LEVEL: 'error',
  };

  it('says where the verify endpoint is and whom it answers; serves no app', async () => {
    const running = await serve({ ...env, GATEHOUSE_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8' }, [
      'serve',
      '--forward-auth',
      '--port',
      '0',
    ]);
    try {
      expect(running.output()).to.contain(
        `gatehouse listening on ${running.url} (forward authentication: GET ${running.url}/.auth/verify for 127.0.0.1, 10.0.0.0/8)`,
      );
      const app = await fetch(`${running.url}/public/x`);
      expect(app.status).to.equal(404);
      expect(((await app.json()) as { error: string }).error).to.match(/no app behind it/);
      const challenge = await fetch(`${running.url}/reports`, { headers: { accept: 'text/html' }, redirect: 'manual' });
      expect(challenge.status).to.equal(302);
      expect(challenge.headers.get('location')).to.equal('/.auth/login/dev?post_login_redirect_uri=%2Freports');
    } finally {
      await running.stop();
    }
  });

  it('--upstream with --forward-auth is a usage error', () => {
    const result = spawnSync(
      process.execPath,
      [...CLI, 'serve', '--forward-auth', '--upstream', 'http://127.0.0.1:3000'],
      { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' },
    );
    expect(result.status).to.equal(2);
    expect(result.stderr).to.contain('gatehouse: --forward-auth serves no app: leave out --upstream');
  });

  it('a GATEHOUSE_TRUSTED_PROXIES entry that is no address stops it at start, naming the entry', () => {
    const result = spawnSync(process.execPath, [...CLI, 'serve', '--forward-auth', '--port', '0'], {
      cwd: root,
      env: { ...process.env, ...env, GATEHOUSE_TRUSTED_PROXIES: 'nginx.internal' },
      encoding: 'utf8',
    });
    expect(result.status).to.equal(1);
    expect(result.stderr).to.contain('GATEHOUSE_TRUSTED_PROXIES: "nginx.internal" is not an address');
  });
});
