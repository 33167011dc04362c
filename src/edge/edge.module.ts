import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AppErrorFilter } from './error.filter';
import { FastRoutes } from './fast-routes';
import { RequestLog } from './request-log';

/**
 * The HTTP edge's providers: the error filter (every error answers its code), the one log line per
 * request, and the hot routes' fast path (fast-routes.ts, which answers its errors with the same
 * filter instance). The Fastify hooks, body parser, headers and OpenAPI document are set up by
 * installEdge (edge.setup.ts), which needs the app itself.
 */
@Module({
  providers: [AppErrorFilter, { provide: APP_FILTER, useExisting: AppErrorFilter }, RequestLog, FastRoutes],
})
export class EdgeModule {}
