// Loopback sockets for the interop tests and benchmarks.
import { createSocket } from 'node:dgram';

/** A UDP port on 127.0.0.1 that was free a moment ago. */
export async function freeUdpPort() {
  const s = createSocket('udp4');
  await new Promise((resolve) => s.bind(0, '127.0.0.1', resolve));
  const { port } = s.address();
  await new Promise((resolve) => s.close(resolve));
  return port;
}
