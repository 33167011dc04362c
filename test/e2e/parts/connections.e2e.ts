import { AddressInfo, connect, Socket } from 'node:net';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createBoard } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw keep-alive client socket: what it received, and whether the server closed it. */
class RawClient {
  received = '';
  closed = false;
  private readonly socket: Socket;
  private readonly opened: Promise<void>;

  constructor(port: number, host: string) {
    this.socket = connect(port, host);
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => (this.received += chunk));
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => (this.closed = true));
    this.opened = new Promise((resolve) => this.socket.once('connect', () => resolve()));
  }

  async ask(path: string): Promise<void> {
    await this.opened;
    this.socket.write(`GET ${path} HTTP/1.1\r\nHost: t\r\n\r\n`);
  }

  /** Resolves once the socket received `answers` status lines, or closed, or `waitMs` passed. */
  async waitFor(answers: number, waitMs = 2000): Promise<void> {
    const until = Date.now() + waitMs;
    while (!this.closed && this.statuses().length < answers && Date.now() < until) await sleep(10);
  }

  statuses(): number[] {
    return [...this.received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
  }

  destroy(): void {
    this.socket.destroy();
  }
}

async function openConnections(app: NestFastifyApplication): Promise<number> {
  return new Promise((resolve) => app.getHttpServer().getConnections((_: unknown, n: number) => resolve(n)));
}

/** Issue #45 row 9: refused requests let go of their socket; one client cannot take every connection. */
describe('connections: refusals close, a cap per client', () => {
  const e2e = useSingleNodeApp({ noApp: true });
  afterEach(async () => {
    await e2e.redis().clear();
  });

  async function listening(env: Record<string, string>): Promise<{ app: NestFastifyApplication; port: number }> {
    const app = await e2e.startApp(env);
    // Both stacks: 127.0.0.1 and ::1 are two clients (loopback IPv4 is one network, ::1 another).
    await app.listen(0, '::');
    return { app, port: (app.getHttpServer().address() as AddressInfo).port };
  }

  it('closes a kept-alive socket after a 429, and keeps it after a 200', async () => {
    const { port } = await listening({ READ_RATE_LIMIT_PER_SEC: '1', READ_RATE_LIMIT_BURST: '1' });
    await createBoard(e2e.started()[0], 'b');
    const client = new RawClient(port, '127.0.0.1');
    await client.ask('/boards/b/top');
    await client.waitFor(1);
    expect(client.statuses()).toEqual([200]);
    expect(client.received).not.toMatch(/connection: close/i);
    await client.ask('/boards/b/top');
    await client.waitFor(2);
    expect(client.statuses()).toEqual([200, 429]);
    expect(client.received).toMatch(/\r\nconnection: close\r\n/i);
    await client.waitFor(3, 1000);
    expect(client.closed).toBe(true);
  });

  it('closes the sockets of streams refused over the per-client stream cap (the issue’s 10 000 sockets, scaled)', async () => {
    const { app, port } = await listening({ STREAM_MAX_PER_CLIENT: '4', STREAM_COALESCE_MS: '60000' });
    await createBoard(app, 'b');
    const clients = Array.from({ length: 40 }, () => new RawClient(port, '127.0.0.1'));
    for (const client of clients) await client.ask('/boards/b/stream');
    for (const client of clients) await client.waitFor(1);
    const statuses = clients.map((client) => client.statuses()[0]).sort();
    expect(statuses).toEqual([...Array(4).fill(200), ...Array(36).fill(429)]);
    for (const client of clients) if (client.statuses()[0] === 429) await client.waitFor(2, 1000);
    expect(clients.filter((client) => client.closed)).toHaveLength(36);
    // The server's side closes once the answer is out: only the 4 streams keep a connection.
    const until = Date.now() + 1000;
    while ((await openConnections(app)) > 4 && Date.now() < until) await sleep(10);
    expect(await openConnections(app)).toBe(4);
    for (const client of clients) client.destroy();
  });

  it('closes the connection of one client over HTTP_CONNECTIONS_PER_CLIENT on arrival; others and /health/live still connect', async () => {
    const { app, port } = await listening({ HTTP_CONNECTIONS_PER_CLIENT: '5' });
    const held = Array.from({ length: 5 }, () => new RawClient(port, '127.0.0.1'));
    while ((await openConnections(app)) < 5) await sleep(10);
    const refused = new RawClient(port, '127.0.0.1');
    await refused.ask('/health/live');
    await refused.waitFor(1);
    expect([refused.closed, refused.received]).toEqual([true, '']);
    const other = new RawClient(port, '::1');
    await other.ask('/health/live');
    await other.waitFor(1);
    expect(other.statuses()).toEqual([200]);
    // A place freed by the client is its own again.
    held.pop()!.destroy();
    while ((await openConnections(app)) > 5) await sleep(10);
    const next = new RawClient(port, '127.0.0.1');
    await next.ask('/health/live');
    await next.waitFor(1);
    expect(next.statuses()).toEqual([200]);
    for (const client of [...held, other, next]) client.destroy();
  });
});
