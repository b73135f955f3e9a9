// A signed-in GET's whole core path, as the sidecar runs it (AuthLayer.decide, then the
// forwarded-header build), over a session stored in a filesystem store of its own: the in-process
// benchmarks of the optional features run it with and without their setting, and the hook's
// benchmark takes its signed-in layer from here.
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
import { forwardHeaders } from '../../dist/sidecar/app.js';
import { storeBenchSession } from './session.js';

/** The host the bench session is bound to, and its requests name. */
export const HOST = '127.0.0.1:8080';

function coreDocument(directory: string, gatehouse: Record<string, unknown>) {
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
    gatehouse: { app: 'bench', ...gatehouse },
  };
}

export interface CorePath {
  readonly layer: AuthLayer;
  /** The signed-in GET /page. */
  readonly view: RequestView;
  /** One request: decided, checked to be forwarded with an identity, and its forwarded headers built. */
  readonly once: () => Promise<void>;
}

/** An auth layer under the given settings of the document's gatehouse section, and the cookie of a session stored for HOST. */
export async function signedInLayer(gatehouse: Record<string, unknown>): Promise<{ layer: AuthLayer; cookie: string }> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-core-path-bench-'));
  const { config } = resolveAuthConfig(coreDocument(directory, gatehouse), {});
  const masterKey = randomBytes(32);
  const store = new FileSystemTokenStore<SessionRecord>({ directory, app: 'bench', masterKey });
  const { cookie } = await storeBenchSession(config, store, masterKey, HOST);
  const layer = new AuthLayer({ headers: loadAddonCore(), config, store, masterKey, logger: createLogger('silent') });
  return { layer, cookie };
}

/** The core path under the given settings of the document's gatehouse section; run once before it is returned. */
export async function signedInCorePath(gatehouse: Record<string, unknown>): Promise<CorePath> {
  const { layer, cookie } = await signedInLayer(gatehouse);
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
    if (decision.kind !== 'forward' || decision.identity === null) throw new Error('the bench session is not let in');
    forwardHeaders(nodeHeaders, decision.edits, false);
  };
  await once();
  return { layer, view, once };
}
