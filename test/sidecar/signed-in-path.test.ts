// How many of gatehouse's own files one warm signed-in GET crosses through the sidecar, counted by
// V8's precise coverage (node:inspector) rather than asserted by hand: every file under src/ with
// a function called while one request is served and answered. docs/architecture.md draws the path.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { expect } from 'chai';

import { resolveAuthConfig } from '../../src/core/config/auth-config.js';
import { deriveKey } from '../../src/core/crypto/keys.js';
import { newSessionId, signSessionId } from '../../src/core/crypto/session-id.js';
import type { SessionRecord } from '../../src/core/session/record.js';
import { FileSystemTokenStore } from '../../src/core/token-store/filesystem.js';
import { createLogger } from '../../src/logging.js';
import { loadAddonCore } from '../../src/native/index.js';
import { attach, createGateway, type Gateway } from '../../src/sidecar/gateway.js';
import { listenEarly, type Listening } from '../../src/sidecar/listen.js';
import { listen } from '../support/http.js';

/**
 * The most files of gatehouse's own a signed-in GET may cross, as the design has it
 * (docs/architecture.md, "A signed-in GET"). As this suite loads the sources (tsx, under mocha),
 * a file's exports can be read through getters: a file whose exported constant the path reads can
 * count as crossed too: such a constant is read once, outside the request (as the forwarder reads
 * its default download rate).
 */
const MAX_FILES = 10;

const SOURCE = pathToFileURL(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src')).href + '/';

const HOUR_MS = 3_600_000;

/** One provider, never contacted: its endpoints are given, and the session's token is far from expiry. */
function document(directory: string): Record<string, unknown> {
  return {
    identityProviders: {
      customOpenIdConnectProviders: {
        dev: {
          registration: {
            clientId: 'gatehouse-test',
            openIdConnectConfiguration: {
              authorizationEndpoint: 'http://127.0.0.1:9/authorize',
              tokenEndpoint: 'http://127.0.0.1:9/token',
              issuer: 'http://127.0.0.1:9',
              certificationUri: 'http://127.0.0.1:9/keys',
            },
          },
        },
      },
    },
    login: { tokenStore: { fileSystem: { directory } } },
  };
}

function get(url: string, cookie: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, headers: { cookie } }, (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
      })
      .once('error', reject);
  });
}

/** The files under src/ with a function called since the last take, each with how many functions. */
async function filesCalled(session: Session): Promise<Map<string, number>> {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const files = new Map<string, number>();
  for (const script of result) {
    if (!script.url.startsWith(SOURCE)) continue;
    const called = script.functions.filter((fn) => (fn.ranges[0]?.count ?? 0) > 0).length;
    if (called > 0) files.set(script.url.slice(SOURCE.length), called);
  }
  return files;
}

describe('the signed-in path', function () {
  this.timeout(30_000);
  let app: Awaited<ReturnType<typeof listen>>;
  let front: Listening;
  let gateway: Gateway;
  let cookie: string;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  before(async () => {
    app = await listen(http.createServer((_req, res) => res.writeHead(200, { 'content-length': '2' }).end('ok')));
    front = await listenEarly('127.0.0.1', 0);
    const host = new URL(front.url).host;
    const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-path-'));
    const { config } = resolveAuthConfig(document(directory), {});
    const masterKey = randomBytes(32);
    gateway = await createGateway({
      config,
      upstream: app.url,
      core: loadAddonCore(),
      logger: createLogger('silent'),
      masterKey,
      webhook: { env: {} },
      accessLog: false,
      env: {},
    });
    attach(front, gateway);
    // A signed-in session as a sign-in leaves it: a sealed record in the filesystem store, and its cookie.
    const store = new FileSystemTokenStore<SessionRecord>({ directory, app: config.app, masterKey });
    const now = Date.now();
    const id = newSessionId();
    await store.put(
      id,
      {
        app: config.app,
        provider: 'dev',
        userId: 'user-1',
        userName: 'User One',
        nameType: 'name',
        roleType: 'roles',
        claims: [
          { typ: 'sub', val: 'user-1' },
          { typ: 'name', val: 'User One' },
        ],
        tokens: { accessToken: 'a'.repeat(40), accessTokenExpiresAt: now + HOUR_MS },
        createdAt: now,
        expiresAt: now + HOUR_MS,
        configFingerprint: config.providers.get('dev')!.fingerprint,
        host,
      },
      now + HOUR_MS,
    );
    cookie = `${config.sessionCookieName}=${signSessionId(deriveKey(masterKey, 'session-cookie', config.app), id)}`;
  });

  after(async () => {
    agent.destroy();
    await gateway?.close();
    await front?.close();
    await app?.close();
  });

  it(`a warm signed-in GET through the sidecar crosses at most ${MAX_FILES} files of gatehouse's own`, async () => {
    const url = `${front.url}/orders?page=1`;
    const session = new Session();
    session.connect();
    try {
      await session.post('Profiler.enable');
      await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
      // Warm: the session cached, the connections to gatehouse and to the app open.
      for (let i = 0; i < 20; i++) expect(await get(url, cookie, agent)).to.equal(200);
      await filesCalled(session); // counters back to zero
      expect(await get(url, cookie, agent)).to.equal(200);
      const files = await filesCalled(session);
      const list = [...files].map(([file, functions]) => `${file} (${functions})`).join('\n  ');
      // Not counted without it: a path that crossed none of these would be no signed-in GET at all.
      expect([...files.keys()], list).to.include.members(['core/auth-layer.ts']);
      expect(files.size, `${files.size} files on the path:\n  ${list}`).to.be.at.most(MAX_FILES);
    } finally {
      await session.post('Profiler.stopPreciseCoverage').catch(() => undefined);
      session.disconnect();
    }
  });
});
