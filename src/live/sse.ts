import type { FastifyReply } from 'fastify';
import type { LiveClient } from './live-hub';
import { STREAM_RETRY_MS } from './live.limits';

/**
 * Takes the response over from Fastify (hijack) and answers Server-Sent Events on it: the headers the
 * request's hooks set (security headers, request id) go out with the event-stream ones.
 */
export function sseClient(reply: FastifyReply): LiveClient {
  reply.hijack();
  const raw = reply.raw;
  // A stream is quiet between events: the socket's idle timeout must not cut it (heartbeats keep proxies happy).
  raw.socket?.setTimeout(0);
  const headers = Object.fromEntries(Object.entries(reply.getHeaders()).filter(([, value]) => value !== undefined));
  raw.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    // Proxies such as nginx would otherwise buffer the events.
    'x-accel-buffering': 'no',
  });
  raw.write(`retry: ${STREAM_RETRY_MS}\n\n`);
  return {
    send: (event, id, listing) => void raw.write(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(listing)}\n\n`),
    heartbeat: () => void raw.write(': heartbeat\n\n'),
    close: () => raw.end(),
  };
}
