import net from 'node:net';

/** A loopback port free at the moment of asking (for a server that must be told its port before it starts). */
export async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A loopback port free at the moment of asking whose next port is free too (gatehouse dev beyond loopback takes both). */
export async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    const next = net.createServer().listen(port + 1, '0.0.0.0');
    const free = await new Promise<boolean>((resolve) => {
      next.once('listening', () => resolve(true));
      next.once('error', () => resolve(false));
    });
    if (free) {
      await new Promise((resolve) => next.close(resolve));
      return port;
    }
  }
}
