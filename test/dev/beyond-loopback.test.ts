// gatehouse dev listening beyond loopback (--host 0.0.0.0): a browser on another machine, or on the
// host of a container, signs in by the name it uses for this machine. Every hop of the sign-in must
// go to that name: a redirect to 127.0.0.1 would send such a browser to itself.
import os from 'node:os';

import { expect } from 'chai';

import { createLogger } from '../../src/logging.js';
import { loadAddonCore } from '../../src/native/addon.js';
import { startDev, type RunningDev } from '../../src/dev/dev.js';
import { Browser } from '../support/browser.js';
import { freePortPair } from '../support/free-port.js';

describe('gatehouse dev beyond loopback', function () {
  this.timeout(30_000);
  // 127.0.0.2 stands for another machine's view of this one: a server bound to 127.0.0.1 does not
  // answer there, and neither name is the other.
  const publicHost = '127.0.0.2';
  let dev: RunningDev;

  before(async () => {
    dev = await startDev({
      host: '0.0.0.0',
      port: await freePortPair(),
      publicHost,
      core: loadAddonCore(),
      logger: createLogger('silent'),
      version: 'test',
    });
  });
  after(() => dev?.close());

  it("names the public host in its URL and in the provider's issuer, the provider on the next port", () => {
    const { port } = new URL(dev.url);
    expect(dev.url).to.equal(`http://${publicHost}:${port}`);
    expect(dev.issuer).to.equal(`http://${publicHost}:${Number(port) + 1}`);
    expect(dev.providerPortBeyondLoopback).to.equal(Number(port) + 1);
  });

  it('signs a browser in with every hop on the public host, and the demo sees the user', async () => {
    const browser = new Browser();
    const hops = await browser.follow(`${dev.url}/`);
    const loginPage = hops.at(-1)!;
    expect(loginPage.url.startsWith(`${dev.issuer}/`), loginPage.url).to.equal(true);
    const after = await browser.submitForm(loginPage, /\/login$/, { username: 'demo', password: 'demo' });
    for (const hop of [...hops, ...after]) expect(new URL(hop.url).hostname, hop.url).to.equal(publicHost);
    const final = after.at(-1)!;
    expect(final.status).to.equal(200);
    expect(final.url).to.equal(`${dev.url}/`);
    const me = await browser.request(`${dev.url}/.auth/me`);
    expect(me.status).to.equal(200);
    expect(JSON.stringify(JSON.parse(me.body))).to.contain('"user_id":"demo"');
  });

  it("signs in by default at this machine's own address (plain HTTP to a provider on this machine is allowed, as to loopback)", async () => {
    const own = await startDev({
      host: '0.0.0.0',
      port: await freePortPair(),
      core: loadAddonCore(),
      logger: createLogger('silent'),
      version: 'test',
    });
    try {
      const external = Object.values(os.networkInterfaces())
        .flat()
        .find((address) => address !== undefined && address.family === 'IPv4' && !address.internal);
      expect(new URL(own.url).hostname).to.equal(external?.address ?? '127.0.0.1');
      const browser = new Browser();
      const hops = await browser.follow(`${own.url}/`);
      const after = await browser.submitForm(hops.at(-1)!, /\/login$/, { username: 'demo', password: 'demo' });
      expect(after.at(-1)!.status, after.at(-1)!.body.slice(0, 300)).to.equal(200);
      expect((await browser.request(`${own.url}/.auth/me`)).status).to.equal(200);
    } finally {
      await own.close();
    }
  });
});
