import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

import { expect } from 'chai';

import { ADDON_PATH } from '../../src/native/addon.js';
import { fallbackCore, loadAddonCore, nativeModeFromEnv, selectCore } from '../../src/native/index.js';

describe('native loader', () => {
  it('loads the addon built by npm install', () => {
    expect(loadAddonCore().kind).to.equal('native');
    expect(selectCore('auto').core.kind).to.equal('native');
    expect(selectCore('auto').fallbackReason).to.equal(undefined);
  });

  it('works in worker threads as well, each with its own state, beside the main thread', async () => {
    const identity = {
      provider: 'p',
      userId: 'u',
      userName: 'n\u00e9',
      authType: 'a',
      nameType: 'n',
      roleType: 'r',
      claims: [{ typ: 't', val: '"v\\\u0001' }],
    };
    const inbound = [
      ['X_PLATFORM_CLIENT_PRINCIPAL', 'x'],
      ['accept', '*/*'],
    ];
    const expected = loadAddonCore().normalizeHeaders(inbound as Array<[string, string]>, identity, {});
    const source = `const { parentPort, workerData } = require('node:worker_threads');
      const addon = require(workerData.path);
      parentPort.postMessage(addon.normalizeHeaders(workerData.inbound, workerData.identity, {}));`;
    const results = await Promise.all(
      [0, 1].map(async () => {
        const worker = new Worker(source, { eval: true, workerData: { path: ADDON_PATH, inbound, identity } });
        const [message] = (await once(worker, 'message')) as [unknown];
        await worker.terminate();
        return message;
      }),
    );
    for (const result of results) expect(result).to.deep.equal(expected);
    expect(loadAddonCore().normalizeHeaders(inbound as Array<[string, string]>, identity, {})).to.deep.equal(expected);
  });

  it('off forces the fallback and says why', () => {
    const selection = selectCore('off');
    expect(selection.core).to.equal(fallbackCore);
    expect(selection.fallbackReason).to.equal('GATEHOUSE_NATIVE=off');
  });

  it('a missing addon names the path it looked at', () => {
    expect(() => loadAddonCore('/nonexistent/gatehouse_native.node')).to.throw(
      /native addon not found at \/nonexistent/,
    );
  });

  it('reads GATEHOUSE_NATIVE, refusing unknown values', () => {
    expect(nativeModeFromEnv({})).to.equal('auto');
    expect(nativeModeFromEnv({ GATEHOUSE_NATIVE: 'REQUIRE' })).to.equal('require');
    expect(nativeModeFromEnv({ GATEHOUSE_NATIVE: 'off' })).to.equal('off');
    expect(() => nativeModeFromEnv({ GATEHOUSE_NATIVE: 'yes' })).to.throw(/must be one of auto, require, off/);
  });
});
