import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { UNMATCHED_ROUTE } from './names';

/** One answered HTTP request, as the metrics and the access-time recorder see it. */
export interface AnsweredRequest {
  method: string;
  /** Route pattern ("/boards/:board/top"), or UNMATCHED_ROUTE when no route matched. */
  route: string;
  /** "<METHOD> <route>": the key listeners file the request under. */
  routeKey: string;
  statusCode: number;
  durationMs: number;
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

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  subscribe(listener: AnsweredRequestListener): void {
    this.listeners.push(listener);
  }

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('onResponse', (request, reply, done) => {
      const route = request.routeOptions.url || UNMATCHED_ROUTE;
      const answered: AnsweredRequest = {
        method: request.method,
        route,
        routeKey: `${request.method} ${route}`,
        statusCode: reply.statusCode,
        durationMs: reply.elapsedTime,
      };
      for (const listener of this.listeners) {
        try {
          listener(answered);
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
}
