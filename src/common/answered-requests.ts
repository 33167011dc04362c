import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { UNMATCHED_ROUTE } from './names';
import { routeConfigOf } from './route-config';
import { addRequestHook, addResponseHook } from './request-hooks';

/** The machine code of each error answer, noted by whoever answers it (error filter, load shedder). */
const errorCodes = new WeakMap<FastifyRequest, string>();

/** Notes the `code` of the error body a request is answered with (read back in the onResponse hook). */
export function noteErrorCode(request: FastifyRequest, code: string): void {
  errorCodes.set(request, code);
}

/** The requests answered with a stored answer (noteReplayed): a header read back cost every answer Node's checks of a name. */
const replayedAnswers = new WeakSet<FastifyRequest>();

/** Notes that a request is answered with a stored answer (`Idempotent-Replayed: true`, read back in the onResponse hook). */
export function noteReplayed(request: FastifyRequest): void {
  replayedAnswers.add(request);
}

/** One answered HTTP request, as the metrics and the access-time recorder see it. */
export interface AnsweredRequest {
  method: string;
  /** Route pattern ("/boards/:board/top"), or UNMATCHED_ROUTE when no route matched. */
  route: string;
  /** "<METHOD> <route>": the key listeners file the request under. */
  routeKey: string;
  statusCode: number;
  durationMs: number;
  /** The error body's `code` when the answer is an error the app made (not a Fastify 404 of no route). */
  errorCode?: string;
  /** True when the answer is a stored answer replayed for an Idempotency-Key. */
  replayed: boolean;
  /** The request's logger: its lines carry the request id (`reqId`). */
  log: FastifyBaseLogger;
}

export type AnsweredRequestListener = (answered: AnsweredRequest) => void;

/**
 * The one Fastify onResponse hook of the app, fanned out to in-process listeners (local metrics,
 * Prometheus, access times). One hook instead of one per listener: the route pattern is read once
 * (Fastify builds `routeOptions` anew on every read) and no promise is made per request. It runs
 * after the answer is sent, off the request's critical path; listeners must be synchronous and cheap.
 */
@Injectable()
export class AnsweredRequests implements OnModuleInit {
  private readonly listeners: AnsweredRequestListener[] = [];
  private readonly logger = new Logger('AnsweredRequests');
  private inFlight = 0;
  /** routeKeyOf's strings, by method and route pattern (both bounded: the app's routes, UNMATCHED_ROUTE). */
  private readonly routeKeys = new Map<string, Map<string, string>>();

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  subscribe(listener: AnsweredRequestListener): void {
    this.listeners.push(listener);
  }

  /** Requests received and not yet answered (or abandoned by their client). */
  get requestsInFlight(): number {
    return this.inFlight;
  }

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    // One listener for every response: a response closes once, so `on` needs no `once` wrapper per request.
    const closed = () => this.inFlight--;
    addRequestHook(fastify, (_request, reply, done) => {
      this.inFlight++;
      // 'close' also fires when the client goes away before an answer, where onResponse never runs.
      reply.raw.on('close', closed);
      done();
    });
    addResponseHook(fastify, (request, reply, done) => {
      const route = (!request.is404 && routeConfigOf(request)?.url) || UNMATCHED_ROUTE;
      const answered: AnsweredRequest = {
        method: request.method,
        route,
        routeKey: this.routeKeyOf(request.method, route),
        statusCode: reply.statusCode,
        durationMs: reply.elapsedTime,
        errorCode: errorCodes.get(request),
        replayed: replayedAnswers.has(request),
        log: request.log,
      };
      // Indexed: an unoptimised for-of allocates an iterator result per listener and request.
      for (let i = 0; i < this.listeners.length; i++) {
        try {
          this.listeners[i](answered);
        } catch (error) {
          // A listener's bug must not cost the others their record, nor Fastify its response hooks.
          this.logger.error(
            `recording an answered request failed: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
      done();
    });
  }

  /**
   * "METHOD /route", one string per route and method: the listeners key their series by it, and a
   * string made anew for each request would be hashed anew by each of them. Route patterns are few.
   */
  private routeKeyOf(method: string, route: string): string {
    let byRoute = this.routeKeys.get(method);
    if (byRoute === undefined) this.routeKeys.set(method, (byRoute = new Map()));
    let key = byRoute.get(route);
    if (key === undefined) byRoute.set(route, (key = `${method} ${route}`));
    return key;
  }
}
