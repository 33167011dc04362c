import { createServer, Server, Socket, connect } from 'node:net';

/**
 * A TCP proxy in front of a Redis that can lose an answer: the command reaches Redis and runs, but
 * the reply never comes back and the connection breaks, as when a network path fails mid-request.
 */
export class FaultProxy {
  private dropping = false;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<FaultProxy> {
    // The server exists before the proxy that relays its connections, which exists once it listens.
    const started: { proxy?: FaultProxy } = {};
    const server = createServer((client) => started.proxy?.relay(client, targetPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('the proxy has no port');
    started.proxy = new FaultProxy(server, address.port);
    return started.proxy;
  }

  /** The next bytes Redis answers with are swallowed and every connection through the proxy is cut. */
  dropNextReply(): void {
    this.dropping = true;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (!this.dropping) {
        client.write(chunk);
        return;
      }
      this.dropping = false;
      for (const socket of this.sockets) socket.destroy();
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }
}
