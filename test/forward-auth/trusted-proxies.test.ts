import { expect } from 'chai';

import { TrustedProxies, TrustedProxiesError } from '../../src/core/forward-auth/trusted-proxies.js';
import { resolveTrustedProxies } from '../../src/sidecar/gateway-runtime.js';

describe('forward auth: trusted proxies', () => {
  it('loopback by default: 127.0.0.0/8, ::1 and their IPv4-mapped form; nothing else', () => {
    const trusted = TrustedProxies.parse();
    for (const address of ['127.0.0.1', '127.10.0.2', '::1', '::ffff:127.0.0.1'])
      expect(trusted.trusts(address), address).to.equal(true);
    for (const address of ['10.0.0.1', '192.168.1.5', '::2', '::ffff:10.0.0.1', 'fe80::1', '', 'localhost', undefined])
      expect(trusted.trusts(address), String(address)).to.equal(false);
  });

  it('addresses, CIDR ranges and named ranges, separated by commas', () => {
    const trusted = TrustedProxies.parse(' 10.1.2.3 , 172.20.0.0/16, 2001:db8::/32, private ');
    for (const address of ['10.1.2.3', '172.20.255.1', '2001:db8::5', '192.168.0.9', 'fd00::1', '10.200.0.1'])
      expect(trusted.trusts(address), address).to.equal(true);
    for (const address of ['127.0.0.1', '172.32.0.1', '2001:db9::1', '8.8.8.8'])
      expect(trusted.trusts(address), address).to.equal(false);
    expect(trusted.description).to.equal('10.1.2.3, 172.20.0.0/16, 2001:db8::/32, private');
  });

  it('an entry that is none of those is an error naming it: a typo never leaves the endpoint open or shut silently', () => {
    for (const text of ['10.0.0.300', '10.0.0.0/33', '::/129', 'localhost', '10.0.0.0/', '10.0.0.0/8x', '*']) {
      expect(() => TrustedProxies.parse(text), text).to.throw(TrustedProxiesError, JSON.stringify(text));
    }
    expect(() => TrustedProxies.parse(' , ')).to.throw(TrustedProxiesError, 'names no address');
  });

  it('an IPv4-mapped entry is the IPv4 address or range it maps: its prefix never takes in every IPv4 peer', () => {
    const trusted = TrustedProxies.parse('::ffff:10.0.0.0/104, ::ffff:192.0.2.7');
    for (const address of ['10.1.2.3', '::ffff:10.200.0.1', '192.0.2.7', '::ffff:192.0.2.7'])
      expect(trusted.trusts(address), address).to.equal(true);
    for (const address of ['8.8.8.8', '1.2.3.4', '::ffff:8.8.8.8', '192.0.2.8', '127.0.0.1'])
      expect(trusted.trusts(address), address).to.equal(false);
    for (const text of ['::ffff:127.0.0.1/8', '::ffff:10.0.0.0/8', '::ffff:0.0.0.0/95']) {
      expect(() => TrustedProxies.parse(text), text).to.throw(TrustedProxiesError, 'prefix from 96 to 128');
    }
  });

  it('an IPv4 range with address bits past its prefix is refused as the typo it is (10.0.0.5/0 would trust everyone)', () => {
    for (const text of ['10.0.0.5/0', '10.0.0.5/8', '192.168.1.1/24'])
      expect(() => TrustedProxies.parse(text), text).to.throw(TrustedProxiesError, 'address bits past');
    expect(TrustedProxies.parse('0.0.0.0/0').trusts('8.8.8.8')).to.equal(true); // written as meant
    expect(TrustedProxies.parse('10.0.0.5/32').trusts('10.0.0.5')).to.equal(true);
  });

  it('GATEHOUSE_TRUSTED_PROXIES is read unless the option says otherwise; empty means unset (loopback)', () => {
    expect(resolveTrustedProxies(undefined, { GATEHOUSE_TRUSTED_PROXIES: '10.0.0.0/8' }).trusts('10.9.9.9')).to.equal(
      true,
    );
    expect(resolveTrustedProxies(undefined, { GATEHOUSE_TRUSTED_PROXIES: '10.0.0.0/8' }).trusts('127.0.0.1')).to.equal(
      false,
    );
    expect(resolveTrustedProxies('192.0.2.1', { GATEHOUSE_TRUSTED_PROXIES: '10.0.0.0/8' }).trusts('10.9.9.9')).to.equal(
      false,
    );
    expect(resolveTrustedProxies(undefined, { GATEHOUSE_TRUSTED_PROXIES: ' ' }).trusts('127.0.0.1')).to.equal(true);
    expect(() => resolveTrustedProxies(undefined, { GATEHOUSE_TRUSTED_PROXIES: 'nginx' })).to.throw(
      TrustedProxiesError,
      'GATEHOUSE_TRUSTED_PROXIES',
    );
  });
});
