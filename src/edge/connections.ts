import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { ServerResponse } from 'node:http';
import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Statuses of a refused request (a rate limit, a quota, a cap, a failure lockout, load shedding, a
 * dependency away): the answer closes its socket, so a refused client holds no kept-alive connection
 * the way a served one may. Its next request pays for a new connection, which the caps below bound.
 */
const CLOSING_STATUSES = new Set([429, 503]);

/** What switches a server's answers to closing their connections: one per server built with closingResponses' class. */
const closersOfAll = new WeakMap<object, () => void>();

/** A server's response class (Node's `ServerResponse` server option), and what switches it to closing every connection. */
export interface ClosingResponses {
  ServerResponse: typeof ServerResponse;
  closeAll: () => void;
}

/**
 * Responses that send `Connection: close` with every refusal (Node ends the socket once the answer
 * is out), and with every answer once `closeAll` was called (the graceful stop). Decided as the
 * status is written, whoever answered (error filter, load shedder, Fastify itself): a Fastify onSend
 * hook would cost every answer a turn of its hook runner for the few that close.
 */
export function closingResponses(): ClosingResponses {
  let closingAll = false;
  class ClosingResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
    override writeHead(
      statusCode: number,
      reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
      headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
    ): this {
      if (closingAll || CLOSING_STATUSES.has(statusCode)) this.setHeader('connection', 'close');
      // Node's own reading of the arguments: a reason phrase, then headers; else the headers second.
      return typeof reason === 'string'
        ? super.writeHead(statusCode, reason, headers)
        : super.writeHead(statusCode, headers ?? reason);
    }
  }
  return { ServerResponse: ClosingResponse, closeAll: () => (closingAll = true) };
}

/** Notes what makes every later answer of `owner`'s server say `Connection: close` (closerOfAll finds it). */
export function setCloserOfAll(owner: object, closer: () => void): void {
  closersOfAll.set(owner, closer);
}

/** What makes every later answer of `owner`'s server say `Connection: close` (after setCloserOfAll). */
export function closerOfAll(owner: object): () => void {
  const closer = closersOfAll.get(owner);
  if (!closer) throw new Error('the server must be built with closingResponses before the graceful shutdown');
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
