import { Body, Controller, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AdminRead, AdminRoute } from '../../access/access.decorators';
import { parseDurationSec } from '../../common/duration';
import { InvalidInputError } from '../../common/errors';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answer, idempotencyKeyOf } from '../../edge/retry-safe';
import { ErrorResponse, RedisBackedController, RetrySafe } from '../../edge/route-decorators';
import { BoardParams } from '../dto/board.dto';
import { RetractionDto, RetractionParams, StartRetractionDto } from '../dto/retraction.dto';
import { RetractionService, RetractionView } from './retraction.service';

/** Retractions of an actor's events (admin). */
@ApiTags('ranking')
@RedisBackedController()
@Controller()
export class RetractionController {
  constructor(private readonly retractions: RetractionService) {}

  @Post('admin/boards/:board/retractions')
  @AdminRoute()
  @HttpCode(202)
  @ApiOperation({
    summary: "Retract an actor's events, or an item, from every window, view and unique count",
    description:
      "Answers 202 once the retraction is recorded (and its block applied); it runs on in bounded steps. An item's retraction also takes it out of every kept snapshot and archive, and removes its data; an actor's leaves snapshots and archives already taken as they are (see docs/api.md).",
  })
  @ApiResponse({ status: 202, type: RetractionDto })
  @RetrySafe()
  @ErrorResponse(
    400,
    'INVALID_INPUT: neither or both of actor and item, a bad block, an actor on a board without actors, an item on a max/min/last board',
  )
  @ErrorResponse(404, 'BOARD_NOT_FOUND')
  async start(
    @Param() params: BoardParams,
    @Body() body: StartRetractionDto,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<RetractionView> {
    const idemKey = idempotencyKeyOf(request);
    if ((body.actor === undefined) === (body.item === undefined))
      throw new InvalidInputError('actor: name either the actor or the item to retract (one of actor, item)');
    const target =
      body.actor === undefined ? { kind: 'item' as const, id: body.item! } : { kind: 'actor' as const, id: body.actor };
    const blockSec = body.block === undefined ? undefined : parseDurationSec(body.block);
    return answer(reply, await this.retractions.start(params.board, target, blockSec, idemKey));
  }

  @AdminRead(
    'admin/boards/:board/retractions/:id',
    { summary: "A retraction's progress: state and what it took out so far" },
    RetractionDto,
  )
  @ErrorResponse(404, 'BOARD_NOT_FOUND, RETRACTION_NOT_FOUND')
  get(@Param() params: RetractionParams): Promise<RetractionView> {
    return this.retractions.get(params.board, params.id);
  }
}
