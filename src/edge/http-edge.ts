import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyHttpOptions } from 'fastify';
import { COMMON_MESSAGES as M } from '../common/common.messages';
import { EdgeSettings } from './edge.settings';
import { toErrorBody } from './error.filter';

/**
 * How often Node looks for requests past their header or request deadline. Node's default (30 s)
 * would let a 10 s header timeout fire anywhere between 10 and 40 s; a quarter of the header timeout
 * (the shorter of the two), at most 1 s, keeps both within 25 % of their setting. A check walks only
 * the requests still being received.
 */
export function deadlineCheckIntervalMs(config: EdgeSettings): number {
  return Math.min(1000, Math.floor(config.HTTP_HEADERS_TIMEOUT_MS / 4));
}

/**
 * Fastify's server options for the HTTP_* timeouts (the connection cap is set on the server itself),
 * its answers made by `responses` (closingResponses).
 */
export function httpServerOptions(
  config: EdgeSettings,
  responses: typeof ServerResponse,
): Partial<FastifyHttpOptions<Server>> {
  return {
    // Socket inactivity: a socket that never sends a request, or whose answer stalls, is closed.
    connectionTimeout: config.HTTP_CONNECTION_TIMEOUT_MS,
    keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    // Fastify sets server.requestTimeout after creating the server (0 unless given here)...
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    // ...and Node checks headersTimeout <= requestTimeout among createServer's own options.
    http: {
      headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: deadlineCheckIntervalMs(config),
      ServerResponse: responses,
    },
    clientErrorHandler: answerClientError(config),
  };
}

/**
 * Answers what Node refuses before a handler runs (a header or request deadline missed, headers too
 * large, malformed HTTP) in the service's error shape with its code, then closes the socket. Fastify's
 * own answer has no `code`. A trickled body is cut here too: its handler never ran, nothing applied.
 */
function answerClientError(config: EdgeSettings): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  const messages: Record<number, string> = {
    408: M.requestTimeout(config.HTTP_HEADERS_TIMEOUT_MS, config.HTTP_REQUEST_TIMEOUT_MS),
    431: M.headersTooLarge(),
    400: M.malformedRequest(),
  };
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const body = JSON.stringify(toErrorBody(Object.assign(new Error(messages[status]), { statusCode: status })));
    // As Node does: an answer whose headers already went out can't be followed by another one.
    const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !answering?.headersSent) {
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}
