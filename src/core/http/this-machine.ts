// Whether a URL's host is this machine: loopback, or one of its own network addresses. A provider
// there is reached without the request leaving the machine, so plain HTTP to it is as safe as to
// loopback: the development provider of `gatehouse dev --host 0.0.0.0` listens on such an address,
// named so that browsers on other machines can reach it too.
import os from 'node:os';

import { isLoopbackHost } from './request-view.js';

type Interfaces = ReturnType<typeof os.networkInterfaces>;

/** `host` as a URL carries it (`10.0.0.5:8081`, `[fd00::2]:80`, `localhost`). */
export function isThisMachine(host: string, interfaces: () => Interfaces = os.networkInterfaces): boolean {
  if (isLoopbackHost(host)) return true;
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d+$/, '');
  return Object.values(interfaces())
    .flat()
    .some((address) => address !== undefined && address.address.toLowerCase() === name.toLowerCase());
}
