import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { noteErrorCode } from '../common/answered-requests';
import { COMMON_MESSAGES as M } from '../common/common.messages';
import { toErrorBody } from '../edge/error.filter';
import { RedisBusyError } from '../common/errors';
import { RedisService } from '../redis/redis.service';
import { addRequestHook } from '../common/request-hooks';

/**
 * Routes that never wait on this instance's Redis backlog: liveness, readiness (its own PING says
 * whether Redis answers), metrics and the API document.
 */
const UNSHED_ROUTES = new Set(['/health/live', '/health/ready', '/metrics', '/admin/metrics/local']);

/**
 * Load shedding: while REDIS_MAX_PENDING_COMMANDS commands of this instance are unanswered, a request
 * that needs Redis is answered 503 REDIS_BUSY before it sends anything. The count includes commands
 * whose client already timed out (Redis still runs them), so a flood of costly requests leaves a
 * bounded backlog behind, and the instance answers normally as soon as Redis has worked it off. A
 * sharded top read, which sends one command per shard and round, also checks before each command
 * (ReadsStore.top, ViewsStore.viewTop), so requests admitted together cannot overshoot the bound by much.
 */
@Injectable()
export class LoadShedder implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly redis: RedisService,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    addRequestHook(fastify, (request, reply, done) => {
      // Fastify builds routeOptions anew on every read: only a busy instance reads it.
      if (!this.redis.busy) return done();
      const route = request.routeOptions.url;
      if (route === undefined || UNSHED_ROUTES.has(route) || route.startsWith('/docs')) return done();
      const body = toErrorBody(new RedisBusyError(M.redisBusy(this.redis.pendingCommands())));
      noteErrorCode(request, body.code);
      void reply.code(503).header('Retry-After', '1').send(body);
    });
  }
}
