import { Body, Param, Put, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ErrorResponse, RedisBackedController } from '../edge/route-decorators';
import { AdminDelete, AdminRead, AdminRoute } from '../access/access.decorators';
import { DeclareSourceDto, IngestParams, SourceListDto, SourceStatusDto } from './dto/ingest.dto';
import { MAX_INGEST_SOURCES } from './ingest.limits';
import { IngestService } from './ingest.service';

@RedisBackedController('ingest')
export class IngestController {
  constructor(private readonly ingest: IngestService) {}

  @Put('admin/ingest/:name')
  @AdminRoute()
  @ApiOperation({
    summary: 'Declare a stream source (Redis stream or NATS JetStream): every instance picks it up',
    description: `Messages are JSON events { board?, item, amount?, at? } counted exactly once (docs/ingest.md). At most ${MAX_INGEST_SOURCES} sources. A changed declaration restarts the source where it stopped.`,
  })
  @ApiResponse({ status: 201, type: SourceStatusDto, description: 'Declared' })
  @ApiResponse({ status: 200, type: SourceStatusDto, description: 'Declared before (changed or identical)' })
  @ErrorResponse(400, 'INVALID_INPUT: a field is invalid, missing for its kind, or of the other kind')
  @ErrorResponse(409, 'INGEST_SOURCE_CONFLICT (another kind under that name), INGEST_SOURCES_FULL')
  async declare(
    @Param() params: IngestParams,
    @Body() body: DeclareSourceDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SourceStatusDto> {
    const { created, source } = await this.ingest.declare(params.name, body);
    reply.status(created ? 201 : 200);
    return source;
  }

  @AdminRead(
    'admin/ingest',
    { summary: 'Declared sources with their lag, totals over every instance and last error' },
    SourceListDto,
  )
  async list(): Promise<SourceListDto> {
    return { sources: await this.ingest.list() };
  }

  @AdminDelete(
    'admin/ingest/:name',
    { summary: 'Stop a source on every instance (its stream, group and dead letters stay)' },
    'INGEST_SOURCE_NOT_FOUND',
  )
  async delete(@Param() params: IngestParams): Promise<void> {
    await this.ingest.delete(params.name);
  }
}
