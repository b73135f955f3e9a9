// Which client request headers are kept from the app as spoofed forwarding claims.
import { expect } from 'chai';

import { isSpoofedForwarding } from '../../src/core/http/spoofed-forwarding.js';

describe('spoofed forwarding headers', () => {
  it('path overrides are dropped always, in any spelling', () => {
    for (const name of ['x-original-url', 'x-rewrite-url', 'x_original_url', 'x.rewrite.url']) {
      expect(isSpoofedForwarding(name, false), name).to.equal(true);
      expect(isSpoofedForwarding(name, true), name).to.equal(true);
    }
  });

  it("the X-Forwarded-* headers gatehouse sets are left to it in their own spelling, and dropped in any other", () => {
    for (const trusted of [false, true]) {
      for (const name of ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']) expect(isSpoofedForwarding(name, trusted), name).to.equal(false);
      for (const name of ['x_forwarded_for', 'x.forwarded.proto', 'x_forwarded-host', 'x-forwarded_host']) expect(isSpoofedForwarding(name, trusted), name).to.equal(true);
    }
  });

  it('with no proxy in front, every other forwarding claim is dropped; behind a trusted proxy they pass', () => {
    for (const name of ['x-forwarded-port', 'x-forwarded-prefix', 'x-forwarded-ssl', 'x-forwarded-scheme', 'x-forwarded-server', 'x-forwarded-uri', 'x_forwarded_port', 'forwarded', 'x-real-ip', 'x_real_ip']) {
      expect(isSpoofedForwarding(name, false), name).to.equal(true);
      expect(isSpoofedForwarding(name, true), name).to.equal(false);
    }
  });

  it('other headers are never touched, including look-alikes', () => {
    for (const name of ['x-forwardedness', 'forwarded-for', 'from', 'x-request-id', 'host', 'cookie', 'x-real-ipv6', 'fx-forwarded-for', 'accept']) {
      expect(isSpoofedForwarding(name, false), name).to.equal(false);
    }
  });
});
