import { Get, Param, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callerOf } from '../edge/caller';
import { ErrorResponse, RedisBackedController } from '../edge/route-decorators';
import { KeyedRoute, MinActorsRead } from '../access/access.decorators';
import { BoardParams } from '../ranking/dto/board.dto';
import { StreamQuery } from './dto/stream.dto';
import { LiveHub } from './live-hub';
import type { StreamFilters } from './watch-set';
import {
  DEFAULT_STREAM_ROWS,
  STREAM_HEARTBEAT_MS,
  STREAM_MAX_BUFFERED_BYTES,
  STREAM_READ_COST_PER_SHARD,
} from './live.limits';
import { answerHead, sseClient } from './sse';

@RedisBackedController('live')
export class LiveController {
  constructor(private readonly hub: LiveHub) {}

  @Get('boards/:board/stream')
  @KeyedRoute('read', 'board')
  @ApiOperation({
    summary: "A window's live top N (Server-Sent Events)",
    description:
      `Event \`snapshot\` first ({ board, window, from, to, version, items; segment with ?segment= }), then event \`top\` with the same shape whenever the top \`limit\` rows change, at most one per STREAM_COALESCE_MS; a comment line every ${STREAM_HEARTBEAT_MS / 1000} s. Each event's id is the board's change version; a reconnect (Last-Event-ID) starts again with a fresh snapshot. ` +
      `Opening a stream costs ${STREAM_READ_COST_PER_SHARD} reads per shard of the board from the client's read budget. The stream ends after STREAM_MAX_LIFETIME_MS, when its API key is revoked, when its board is deleted, when the client read nothing for STREAM_IDLE_TIMEOUT_MS or left more than ${STREAM_MAX_BUFFERED_BYTES} bytes unread; reconnect then. HEAD answers the headers only. ` +
      'With `perGroup` or `minActors` the rows are what GET top answers with them (rows keep their board rank; moderation leaves hidden items out as everywhere). ' +
      "With `metric` (a board with metrics) the rows rank by that metric, as GET top?metric= lists them, and the events name it as `metric`; on a board with metrics every row carries `metrics`, each metric's count.",
  })
  @ApiResponse({
    status: 200,
    description: 'Server-Sent Events',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ErrorResponse(
    400,
    'INVALID_INPUT: perGroup on a board without groups, minActors on a board without actors; UNKNOWN_METRIC: a metric the board does not declare (any metric on a board without metrics)',
  )
  @ErrorResponse(404, 'BOARD_NOT_FOUND, WINDOW_NOT_FOUND')
  @MinActorsRead()
  @ErrorResponse(
    429,
    "STREAM_LIMIT: this client (API key, else address) holds STREAM_MAX_PER_CLIENT streams; STREAM_SEGMENT_LIMIT: the board's streams watch STREAM_MAX_SEGMENTS_PER_BOARD distinct segments; RATE_LIMITED: the read budget lacks the cost of a stream",
  )
  @ErrorResponse(503, 'STREAM_CAPACITY: this instance serves its most streams; REDIS_UNAVAILABLE, REDIS_BUSY')
  async stream(
    @Param() params: BoardParams,
    @Query() query: StreamQuery,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    // A HEAD answer has no body, so it can't carry a stream: the headers a GET would answer, nothing opened.
    if (request.method === 'HEAD') {
      await this.hub.check(params.board, query.window, query.segment, filtersOf(query));
      answerHead(reply);
      return;
    }
    const unsubscribe = await this.hub.subscribe(
      params.board,
      query.window,
      query.limit ?? DEFAULT_STREAM_ROWS,
      callerOf(request).client,
      () => sseClient(reply),
      query.segment,
      filtersOf(query),
    );
    // A client gone while its first read was under way is dropped at once.
    if (reply.raw.destroyed) unsubscribe();
    else reply.raw.on('close', unsubscribe);
  }
}

/** The stream's filters and metric as asked (absent ones left out: streams asking the same share their reads). */
function filtersOf(query: StreamQuery): StreamFilters {
  const { perGroup, minActors, metric } = query;
  return {
    ...(perGroup === undefined ? {} : { perGroup }),
    ...(minActors === undefined ? {} : { minActors }),
    ...(metric === undefined ? {} : { metric }),
  };
}
