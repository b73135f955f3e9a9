// Plain HTTP to an identity provider only when it is on this machine.
import { expect } from 'chai';

import { isThisMachine } from '../../../src/core/http/this-machine.js';

describe('this machine', () => {
  const interfaces = () =>
    ({
      lo: [
        { address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', mac: '', internal: true, cidr: '127.0.0.1/8' },
      ],
      eth0: [
        {
          address: '10.1.2.3',
          netmask: '255.255.255.0',
          family: 'IPv4',
          mac: '',
          internal: false,
          cidr: '10.1.2.3/24',
        },
        {
          address: 'fd00::2',
          netmask: 'ffff:ffff:ffff:ffff::',
          family: 'IPv6',
          mac: '',
          internal: false,
          cidr: 'fd00::2/64',
          scopeid: 0,
        },
      ],
    }) as ReturnType<typeof import('node:os').networkInterfaces>;

  it('is loopback, or one of its own addresses, with or without a port', () => {
    for (const host of [
      'localhost:8080',
      '127.0.0.1',
      '[::1]:443',
      '10.1.2.3',
      '10.1.2.3:8081',
      '[fd00::2]:80',
      '[FD00::2]',
    ]) {
      expect(isThisMachine(host, interfaces), host).to.equal(true);
    }
  });

  it('is not another address or a name, however close', () => {
    for (const host of ['10.1.2.4', '10.1.2.30:8081', 'idp.example.com', '[fd00::3]', '0.0.0.0', '10.1.2.3.example']) {
      expect(isThisMachine(host, interfaces), host).to.equal(false);
    }
  });
});
