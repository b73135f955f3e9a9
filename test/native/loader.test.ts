import { expect } from 'chai';

import { fallbackCore, loadAddonCore, nativeModeFromEnv, selectCore } from '../../src/native/index.js';

describe('native loader', () => {
  it('loads the addon built by npm install', () => {
    expect(loadAddonCore().kind).to.equal('native');
    expect(selectCore('auto').core.kind).to.equal('native');
    expect(selectCore('auto').fallbackReason).to.equal(undefined);
  });

  it('off forces the fallback and says why', () => {
    const selection = selectCore('off');
    expect(selection.core).to.equal(fallbackCore);
    expect(selection.fallbackReason).to.equal('GATEHOUSE_NATIVE=off');
  });

  it('a missing addon names the path it looked at', () => {
    expect(() => loadAddonCore('/nonexistent/gatehouse_native.node')).to.throw(/native addon not found at \/nonexistent/);
  });

  it('reads GATEHOUSE_NATIVE, refusing unknown values', () => {
    expect(nativeModeFromEnv({})).to.equal('auto');
    expect(nativeModeFromEnv({ GATEHOUSE_NATIVE: 'REQUIRE' })).to.equal('require');
    expect(nativeModeFromEnv({ GATEHOUSE_NATIVE: 'off' })).to.equal('off');
    expect(() => nativeModeFromEnv({ GATEHOUSE_NATIVE: 'yes' })).to.throw(/must be one of auto, require, off/);
  });
});
