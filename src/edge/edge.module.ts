import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AppErrorFilter } from './error.filter';
import { RequestLog } from './request-log';

/**
 * The HTTP edge's providers: the error filter (every error answers its code) and the one log line per
 * request. The Fastify hooks, body parser, headers and OpenAPI document are set up by installEdge
 * (edge.setup.ts), which needs the app itself.
 */
@Module({
  providers: [{ provide: APP_FILTER, useClass: AppErrorFilter }, RequestLog],
})
export class EdgeModule {}
