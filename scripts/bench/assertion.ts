// The signed identity assertion's cost: a signed-in GET's whole core path (AuthLayer.decide, then
// the forwarded-header build the sidecar does) with gatehouse.identityAssertion on and off, over
// the same stored session, measured in interleaved slices in one run (target: on at most 1.05×
// off). The assertion is signed once per session and then looked up, so what is left is the lookup
// and one more header.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { AuthLayer } from '../../dist/core/auth-layer.js';
import { resolveAuthConfig } from '../../dist/core/config/auth-config.js';
import type { RequestView } from '../../dist/core/http/request-view.js';
import type { SessionRecord } from '../../dist/core/session/record.js';
import { FileSystemTokenStore } from '../../dist/core/token-store/filesystem.js';
import { createLogger } from '../../dist/logging.js';
import { loadAddonCore } from '../../dist/native/index.js';
import { forwardHeaders } from '../../dist/sidecar/forward-headers.js';
import { formatRate, interleavedMeasure, table } from './measure.js';
import { storeBenchSession } from './session.js';

const HOST = '127.0.0.1:8080';
const ASSERTION_HEADER = 'X-PLATFORM-CLIENT-PRINCIPAL-ASSERTION';

function benchDocument(directory: string, assertions: boolean) {
  return {
    identityProviders: {
      customOpenIdConnectProviders: {
        bench: {
          registration: {
            clientId: 'bench',
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
    gatehouse: { app: 'bench', ...(assertions ? { identityAssertion: {} } : {}) },
  };
}

/** One signed-in request through a layer, as the sidecar handles it; checks the assertion is there, or not. */
async function signedInRequest(assertions: boolean): Promise<() => Promise<void>> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-assertion-bench-'));
  const { config } = resolveAuthConfig(benchDocument(directory, assertions), {});
  const masterKey = randomBytes(32);
  const store = new FileSystemTokenStore<SessionRecord>({ directory, app: 'bench', masterKey });
  const { cookie } = await storeBenchSession(config, store, masterKey, HOST);
  const layer = new AuthLayer({ headers: loadAddonCore(), config, store, masterKey, logger: createLogger('silent') });
  const headers: Array<readonly [string, string]> = [
    ['Host', HOST],
    ['Accept', 'text/html'],
    ['Cookie', cookie],
    ['User-Agent', 'bench'],
  ];
  const nodeHeaders = Object.fromEntries(headers.map(([n, v]) => [n.toLowerCase(), v]));
  const view: RequestView = {
    method: 'GET',
    path: '/page',
    query: '',
    headers,
    scheme: 'http',
    host: HOST,
    remoteAddress: '127.0.0.1',
    readBody: async () => Buffer.alloc(0),
  };
  const once = async () => {
    const decision = await layer.decide(view);
    if (decision.kind !== 'forward' || decision.identity === null)
      throw new Error('the bench session is not signed in');
    forwardHeaders(nodeHeaders, decision.edits, false);
  };
  await once();
  const decision = await layer.decide(view);
  const carries = decision.kind === 'forward' && decision.edits.set.some(([name]) => name === ASSERTION_HEADER);
  if (carries !== assertions) throw new Error(`the bench request ${assertions ? 'lacks' : 'carries'} an assertion`);
  return once;
}

export async function benchAssertion(quick: boolean): Promise<string> {
  const off = await signedInRequest(false);
  const on = await signedInRequest(true);
  const { rates, threadCpuNsPerRun } = await interleavedMeasure(
    [
      { name: 'off', run: off, async: true },
      { name: 'on', run: on, async: true },
    ],
    quick ? 2_000 : 10_000,
  );
  const cpu = (i: number) => (threadCpuNsPerRun ? `${(threadCpuNsPerRun[i]! / 1000).toFixed(2)} µs` : 'n/a');
  const cost = (i: number) =>
    threadCpuNsPerRun ? `${(threadCpuNsPerRun[i]! / threadCpuNsPerRun[0]!).toFixed(3)}×` : 'n/a';
  return table(
    ['signed-in GET, core path in process', 'requests/s', 'CPU per request', 'CPU vs off (target ≤ 1.05×)'],
    [
      ['identity assertion off', formatRate(rates[0]!), cpu(0), '1.000×'],
      ['identity assertion on', formatRate(rates[1]!), cpu(1), cost(1)],
    ],
  );
}
