import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { LiveClient } from './live-client';
import { STREAM_RETRY_MS } from './live.limits';

const EVENT_STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // Proxies such as nginx would otherwise buffer the events.
  'x-accel-buffering': 'no',
};

/** One event as it goes out: built once and written to every client that gets it. */
export function sseFrame(event: string, id: number, data: string): Buffer {
  return Buffer.from(`id: ${id}\nevent: ${event}\ndata: ${data}\n\n`);
}

export const HEARTBEAT_FRAME = Buffer.from(': heartbeat\n\n');

/** HEAD of the stream: the event-stream headers and no body (no stream is opened). */
export function answerHead(reply: FastifyReply): void {
  void reply.code(200).headers(EVENT_STREAM_HEADERS).send();
}

/**
 * Takes the response over from Fastify (hijack) and answers Server-Sent Events on it: the headers the
 * request's hooks set (security headers, request id) go out with the event-stream ones. Nothing is
 * ever written to a response that ended or was destroyed, and a socket error (the peer reset) only
 * closes it: no client can make the response emit an unhandled 'error', which would end the process.
 */
export function sseClient(reply: FastifyReply): LiveClient {
  reply.hijack();
  const raw = reply.raw;
  // The stream is quiet between events: the socket's idle timeout must not cut it. The hub ends a
  // stream whose client stops reading (STREAM_IDLE_TIMEOUT_MS) and every stream at STREAM_MAX_LIFETIME_MS.
  raw.socket?.setTimeout(0);
  raw.on('error', () => raw.destroy());
  raw.socket?.on('error', () => raw.destroy());
  const headers = Object.fromEntries(Object.entries(reply.getHeaders()).filter(([, value]) => value !== undefined));
  raw.writeHead(200, { ...headers, ...EVENT_STREAM_HEADERS });
  // Set when the socket takes a write: a client that reads keeps taking them, a stalled one stops.
  let progressed = true;
  const flushed = () => (progressed = true);
  write(raw, `retry: ${STREAM_RETRY_MS}\n\n`, flushed);
  return {
    write: (frame) => write(raw, frame, flushed),
    get bufferedBytes() {
      return raw.writableLength;
    },
    takeProgress: () => {
      const answer = progressed || raw.writableLength === 0;
      progressed = false;
      return answer;
    },
    close: () => {
      // A stalled reader would never take what is still buffered: cut it rather than wait.
      if (raw.writableLength > 0) cut(raw);
      else if (!raw.writableEnded && !raw.destroyed) raw.end();
    },
    destroy: () => cut(raw),
  };
}

/**
 * Cuts a connection with a reset: the kernel drops what it still holds for the peer at once. A plain
 * close would queue a FIN behind those bytes and keep the socket's buffer (up to a few MB) until the
 * peer reads or the kernel gives up on it minutes later.
 */
function cut(raw: ServerResponse): void {
  const socket = raw.socket;
  if (socket && !socket.destroyed) socket.resetAndDestroy();
  else raw.destroy();
}

function write(raw: ServerResponse, chunk: Buffer | string, flushed: () => void): boolean {
  if (raw.writableEnded || raw.destroyed) return false;
  raw.write(chunk, flushed);
  return true;
}
