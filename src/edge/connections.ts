import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * Statuses of a refused request (a rate limit, a quota, a cap, a failure lockout, load shedding, a
 * dependency away): the answer closes its socket, so a refused client holds no kept-alive connection
 * the way a served one may. Its next request pays for a new connection, which the caps below bound.
 */
const CLOSING_STATUSES = new Set([429, 503]);

/** What switches a server's answers to closing their connections: one per server closeRefusedConnections was installed on. */
const closersOfAll = new WeakMap<FastifyInstance, () => void>();

/**
 * Sends `Connection: close` with every refusal (Node ends the socket once the answer is out), and
 * with every answer once the server stops (closerOfAll). One onSend hook for both: each hook costs
 * every answer a turn of Fastify's hook runner.
 */
export function closeRefusedConnections(fastify: FastifyInstance): void {
  let closingAll = false;
  closersOfAll.set(fastify, () => (closingAll = true));
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (closingAll || CLOSING_STATUSES.has(reply.statusCode)) void reply.header('connection', 'close');
    done(null, payload);
  });
}

/** What makes every later answer of `fastify` say `Connection: close` (after closeRefusedConnections). */
export function closerOfAll(fastify: FastifyInstance): () => void {
  const closer = closersOfAll.get(fastify);
  if (!closer) throw new Error('closeRefusedConnections must be installed before the graceful shutdown');
  return closer;
}

/** What capConnectionsPerClient needs. */
export interface ConnectionCap {
  /** Open connections one client may hold on this instance; one more is closed on arrival. */
  maxPerClient: number;
  /** The client an address counts as (its network, as the rate limits name it). */
  clientOf: (address: string) => string;
  /** TRUST_PROXY as Fastify takes it: a trusted proxy's connections carry many clients and are not capped. */
  trustProxy: false | number | string[];
}

/**
 * Caps the connections of each client (its peer address's network) at `maxPerClient`: one more is
 * closed on arrival, as HTTP_MAX_CONNECTIONS closes one over the whole cap, so one client cannot take
 * the connections every other client and the probes need. Behind trusted proxies the peer is the
 * proxy, which pools many clients: its connections are not counted (TRUST_PROXY as a hop count
 * trusts every peer, so the cap is then the proxy's to enforce). The table holds only clients with
 * an open connection: at most HTTP_MAX_CONNECTIONS entries.
 */
export function capConnectionsPerClient(server: Server, cap: ConnectionCap): void {
  if (typeof cap.trustProxy === 'number') return;
  const proxies = blockListOf(cap.trustProxy === false ? [] : cap.trustProxy);
  const openByClient = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || isTrusted(proxies, address)) return;
    const client = cap.clientOf(address);
    const open = openByClient.get(client) ?? 0;
    if (open >= cap.maxPerClient) {
      socket.destroy();
      return;
    }
    openByClient.set(client, open + 1);
    socket.once('close', () => {
      const left = (openByClient.get(client) ?? 1) - 1;
      if (left <= 0) openByClient.delete(client);
      else openByClient.set(client, left);
    });
  });
}

/** TRUST_PROXY's addresses and CIDRs as a BlockList (validated at boot: each is an IP, with an optional prefix). */
function blockListOf(entries: string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split('/');
    const type = isIPv6(address) ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return list;
}

function isTrusted(proxies: BlockList, address: string): boolean {
  const plain = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  if (isIPv4(plain)) return proxies.check(plain, 'ipv4');
  return isIPv6(plain) && proxies.check(plain, 'ipv6');
}
