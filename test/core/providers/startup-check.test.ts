// A provider that cannot be reached is said at start, with its discovery URL and
// the cause, without holding the start up; it is tried again in the background
// (said once, not at every attempt) and its recovery is said once too.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import { expect } from 'chai';

import { startAuthRuntime } from '../../../src/core/auth-runtime.js';
import { resolveAuthConfig } from '../../../src/core/config/auth-config.js';
import type { Provider } from '../../../src/core/providers/provider.js';
import { checkProvidersAtStart } from '../../../src/core/providers/startup-check.js';
import { fallbackCore } from '../../../src/native/index.js';
import { freePort } from '../../support/free-port.js';
import { capturingLogger } from '../../support/logs.js';

describe('providers checked at start', () => {
  it('unreachable: one warning with the URL and the cause; tried again with a growing pause; reachable: said once; stop ends the retries', async () => {
    const logs = capturingLogger('debug');
    let attempts = 0;
    const provider = {
      alias: 'corp',
      discoveryUrl: 'https://idp.example/.well-known/openid-configuration',
      prepare: async () => {
        attempts++;
        if (attempts < 3) throw new Error('discovery (https://idp.example/…): provider unreachable (ECONNREFUSED)');
      },
    } as unknown as Provider;
    const check = checkProvidersAtStart([provider], logs.logger, { firstRetryMs: 10, maxRetryMs: 40 });
    for (let i = 0; i < 100 && attempts < 3; i++) await delay(10);
    await delay(20);
    const lines = logs.lines();
    const warnings = lines.filter(
      (l) =>
        l.msg ===
        'identity provider not reachable at start: its sign-ins fail until it is; trying again in the background',
    );
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.include({
      provider: 'corp',
      discovery: 'https://idp.example/.well-known/openid-configuration',
    });
    expect(String(warnings[0]!.reason)).to.include('ECONNREFUSED');
    expect(
      lines.filter((l) => l.msg === 'identity provider reachable: its discovery document was fetched'),
    ).to.have.length(1);
    check.stop();

    let later = 0;
    const failing = {
      alias: 'x',
      prepare: async () => {
        later++;
        throw new Error('down');
      },
    } as unknown as Provider;
    const stopped = checkProvidersAtStart([failing], logs.logger, { firstRetryMs: 10 });
    await delay(5);
    stopped.stop();
    const after = later;
    await delay(60);
    expect(later).to.equal(after);
  });

  it('a real start against a provider at a closed port: the start is not held up, and the warning names the discovery URL and ECONNREFUSED', async () => {
    const port = await freePort();
    const discovery = `http://127.0.0.1:${port}/.well-known/openid-configuration`;
    const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-check-'));
    const { config } = resolveAuthConfig(
      {
        identityProviders: {
          customOpenIdConnectProviders: {
            corp: {
              registration: { clientId: 'c', openIdConnectConfiguration: { wellKnownOpenIdConfiguration: discovery } },
            },
          },
        },
        login: { tokenStore: { fileSystem: { directory } } },
      },
      {},
    );
    const logs = capturingLogger();
    const runtime = await startAuthRuntime({
      headers: fallbackCore,
      config,
      logger: logs.logger,
      masterKey: Buffer.alloc(32, 1),
      env: {},
    });
    try {
      let warning: Record<string, unknown> | undefined;
      for (let i = 0; i < 100 && warning === undefined; i++) {
        warning = logs.lines().find((l) => String(l.msg).startsWith('identity provider not reachable at start'));
        await delay(20);
      }
      expect(warning, logs.raw()).to.include({ provider: 'corp', discovery });
      expect(String(warning!.reason)).to.include('ECONNREFUSED');
      expect(String(warning!.reason)).to.include(discovery);
    } finally {
      await runtime.close();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
