import dgram from 'node:dgram';
import net from 'node:net';

/**
 * Ports the OS says are free now, on loopback, for daemons a test starts. Racy: the port is
 * released before the daemon binds it, and another process can take it in between. Only where
 * the code under test cannot listen on port 0 and report the port it bound (each caller says
 * why); otherwise listen on 0 and read the port back.
 */
export function freeTcpPort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolvePort(port));
    });
  });
}

export function freeUdpPort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', reject);
    socket.bind(0, host, () => {
      const { port } = socket.address();
      socket.close(() => resolvePort(port));
    });
  });
}

/** A free port of the kind the network needs. */
export function freePort(network: 'tcp' | 'udp' = 'tcp'): Promise<number> {
  return network === 'udp' ? freeUdpPort() : freeTcpPort();
}

/** Whether a TCP connection to host:port is accepted now (closed at once). */
export function acceptsConnections(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}
