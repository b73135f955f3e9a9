// A running gatehouse's assertion keys: made at its first start and kept, sealed, in the token
// store directory, so a restart (or another process sharing the directory) signs with the same
// key; or given in GATEHOUSE_ASSERTION_KEY, and then nothing is made or stored.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';
import { pino } from 'pino';

import { AssertionKeyError } from '../../../src/core/assertion/environment-keys.js';
import { startAuthRuntime } from '../../../src/core/auth-runtime.js';
import { resolveAuthConfig } from '../../../src/core/config/auth-config.js';
import type { RequestView } from '../../../src/core/http/request-view.js';
import { fallbackCore } from '../../../src/native/index.js';

const silent = pino({ level: 'silent' });

function config(directory: string) {
  return resolveAuthConfig(
    {
      identityProviders: {
        customOpenIdConnectProviders: {
          corp: {
            registration: {
              clientId: 'c',
              openIdConnectConfiguration: {
                authorizationEndpoint: 'http://127.0.0.1:9/a',
                tokenEndpoint: 'http://127.0.0.1:9/t',
                issuer: 'http://127.0.0.1:9',
                certificationUri: 'http://127.0.0.1:9/k',
              },
            },
          },
        },
      },
      login: { tokenStore: { fileSystem: { directory } } },
      gatehouse: { identityAssertion: {} },
    },
    {},
  ).config;
}

/** The record files under a store directory (its app scopes' files). */
async function recordsIn(directory: string): Promise<string[]> {
  const names = await fs.readdir(directory, { recursive: true }).catch(() => []);
  return names.filter((name) => name.includes(path.sep));
}

const keysRequest: RequestView = {
  method: 'GET',
  path: '/.auth/keys',
  query: '',
  headers: [['Host', 'app.example.com']],
  scheme: 'https',
  host: 'app.example.com',
  remoteAddress: '127.0.0.1',
  readBody: async () => Buffer.alloc(0),
};

/** The kids a runtime started with `env` publishes. */
async function publishedKids(directory: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const runtime = await startAuthRuntime({ headers: fallbackCore, config: config(directory), logger: silent, env });
  try {
    const answer = await runtime.layer.decide(keysRequest);
    expect(answer.kind).to.equal('respond');
    if (answer.kind !== 'respond') throw new Error('forwarded');
    expect(answer.status).to.equal(200);
    return (JSON.parse(answer.body!.toString()) as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid);
  } finally {
    await runtime.close();
  }
}

describe('identity assertion keys of a running gatehouse', () => {
  let directory: string;
  const env = { GATEHOUSE_ENCRYPTION_KEY: randomBytes(32).toString('hex') };
  beforeEach(async () => {
    directory = await fs.mkdtemp(path.join(os.tmpdir(), 'gatehouse-assertion-runtime-'));
  });
  afterEach(() => fs.rm(directory, { recursive: true, force: true }));

  it('are made at the first start, kept in the token store directory, and the same after a restart', async () => {
    const first = await publishedKids(directory, env);
    expect(first).to.have.length(1);
    expect(await recordsIn(path.join(directory, 'assertion-keys'))).to.have.length(1);
    expect(await publishedKids(directory, env)).to.deep.equal(first);
  });

  it('a key given in GATEHOUSE_ASSERTION_KEY is the one published, and none is made', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'given' };
    const kids = await publishedKids(directory, { ...env, GATEHOUSE_ASSERTION_KEY: JSON.stringify(jwk) });
    expect(kids).to.deep.equal(['given']);
    expect(await recordsIn(path.join(directory, 'assertion-keys'))).to.deep.equal([]);
  });

  it('a value that is no key stops the start, naming the variable', async () => {
    const error = await startAuthRuntime({
      headers: fallbackCore,
      config: config(directory),
      logger: silent,
      env: { ...env, GATEHOUSE_ASSERTION_KEY: 'hunter2' },
    }).then(
      async (runtime) => {
        await runtime.close();
        throw new Error('started');
      },
      (failure: unknown) => failure,
    );
    expect(error).to.be.instanceOf(AssertionKeyError);
    expect((error as Error).message)
      .to.include('GATEHOUSE_ASSERTION_KEY')
      .and.not.include('hunter2');
  });
});
