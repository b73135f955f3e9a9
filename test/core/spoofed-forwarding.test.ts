// Which client request headers are kept from the app as spoofed forwarding claims.
import { expect } from 'chai';

import { isSpoofedForwarding } from '../../src/core/http/header-policy.js';

describe('spoofed forwarding headers', () => {
  it('path and method overrides are dropped always, in any spelling', () => {
    for (const name of [
      'x-original-url',
      'x-rewrite-url',
      'x_original_url',
      'x.rewrite.url',
      'x-http-method-override',
      'x-http-method',
      'x-method-override',
      'X_HTTP_Method_Override',
    ]) {
      expect(isSpoofedForwarding(name, false), name).to.equal(true);
      expect(isSpoofedForwarding(name, true), name).to.equal(true);
    }
  });

  it('the X-Forwarded-* headers gatehouse sets are left to it in their own spelling, and dropped in any other', () => {
    for (const trusted of [false, true]) {
      for (const name of ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host'])
        expect(isSpoofedForwarding(name, trusted), name).to.equal(false);
      for (const name of ['x_forwarded_for', 'x.forwarded.proto', 'x_forwarded-host', 'x-forwarded_host'])
        expect(isSpoofedForwarding(name, trusted), name).to.equal(true);
    }
  });

  it('with no proxy in front, every other forwarding claim is dropped; behind a trusted proxy they pass', () => {
    for (const name of [
      'x-forwarded-port',
      'x-forwarded-prefix',
      'x-forwarded-ssl',
      'x-forwarded-scheme',
      'x-forwarded-server',
      'x-forwarded-uri',
      'x_forwarded_port',
      'forwarded',
      'x-forwarded',
      'x-real-ip',
      'x_real_ip',
      'true-client-ip',
      'True_Client_IP',
      'x-client-ip',
      'x-cluster-client-ip',
      'x-proxyuser-ip',
      'x-host',
      'x-original-host',
      'x-url-scheme',
      'front-end-https',
    ]) {
      expect(isSpoofedForwarding(name, false), name).to.equal(true);
      expect(isSpoofedForwarding(name, true), name).to.equal(false);
    }
  });

  it('other headers are never touched, including look-alikes', () => {
    for (const name of [
      'x-forwardedness',
      'forwarded-for',
      'from',
      'x-request-id',
      'host',
      'cookie',
      'x-real-ipv6',
      'fx-forwarded-for',
      'accept',
      'te',
      'traceparent',
      'x-hostname',
      'x-http-methods',
    ]) {
      expect(isSpoofedForwarding(name, false), name).to.equal(false);
    }
  });
});
