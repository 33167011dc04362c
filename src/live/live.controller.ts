import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ErrorResponse, KeyedRoute, RedisBackedController } from '../common/route-decorators';
import { BoardParams } from '../ranking/dto/board.dto';
import { StreamQuery } from './dto/stream.dto';
import { LiveHub } from './live-hub';
import { DEFAULT_STREAM_ROWS, STREAM_HEARTBEAT_MS } from './live.limits';
import { sseClient } from './sse';

@ApiTags('live')
@RedisBackedController()
@Controller()
export class LiveController {
  constructor(private readonly hub: LiveHub) {}

  @Get('boards/:board/stream')
  @KeyedRoute('read', 'board')
  @ApiOperation({
    summary: "A window's live top N (Server-Sent Events)",
    description: `Event \`snapshot\` first ({ board, window, from, to, version, items }), then event \`top\` with the same shape whenever the top \`limit\` rows change, at most one per STREAM_COALESCE_MS; a comment line every ${STREAM_HEARTBEAT_MS / 1000} s. Each event's id is the board's change version; a reconnect (Last-Event-ID) starts again with a fresh snapshot.`,
  })
  @ApiResponse({
    status: 200,
    description: 'Server-Sent Events',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ErrorResponse(404, 'BOARD_NOT_FOUND, WINDOW_NOT_FOUND')
  @ErrorResponse(503, 'STREAM_CAPACITY: this instance serves its most streams; REDIS_UNAVAILABLE, REDIS_BUSY')
  async stream(@Param() params: BoardParams, @Query() query: StreamQuery, @Res() reply: FastifyReply): Promise<void> {
    const unsubscribe = await this.hub.subscribe(params.board, query.window, query.limit ?? DEFAULT_STREAM_ROWS, () =>
      sseClient(reply),
    );
    // A client gone while its first read was under way is dropped at once.
    if (reply.raw.destroyed) unsubscribe();
    else reply.raw.on('close', unsubscribe);
  }
}
