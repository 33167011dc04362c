import { Body, Param, Post } from '@nestjs/common';
import { AdminBoardSteps, AdminRead } from '../../access/access.decorators';
import { parseDurationSec } from '../../common/duration';
import { InvalidInputError } from '../../common/errors';
import { answer, Exchange, idempotencyKeyOf, WriteExchange } from '../../edge/retry-safe';
import { ErrorResponse, RedisBackedController } from '../../edge/route-decorators';
import { BoardParams } from '../dto/board.dto';
import { RetractionDto, RetractionParams, StartRetractionDto } from '../dto/retraction.dto';
import { RetractionService, RetractionView } from './retraction.service';

/** Retractions of an actor's events (admin). */
@RedisBackedController('ranking')
export class RetractionController {
  constructor(private readonly retractions: RetractionService) {}

  @Post('admin/boards/:board/retractions')
  @AdminBoardSteps(
    {
      summary: "Retract an actor's events, or an item, from every window, view and unique count",
      description:
        "Answers 202 once the retraction is recorded (and its block applied); it runs on in bounded steps. An item's retraction also takes it out of every kept snapshot and archive, and removes its data; an actor's leaves snapshots and archives already taken as they are (see docs/api.md).",
    },
    RetractionDto,
    'INVALID_INPUT: neither or both of actor and item, a bad block, an actor on a board without actors, an item on a max/min/last board',
  )
  async start(
    @Param() params: BoardParams,
    @Body() body: StartRetractionDto,
    @Exchange() exchange: WriteExchange,
  ): Promise<RetractionView> {
    const idemKey = idempotencyKeyOf(exchange.request);
    if ((body.actor === undefined) === (body.item === undefined))
      throw new InvalidInputError('actor: name either the actor or the item to retract (one of actor, item)');
    const target =
      body.actor === undefined ? { kind: 'item' as const, id: body.item! } : { kind: 'actor' as const, id: body.actor };
    const blockSec = body.block === undefined ? undefined : parseDurationSec(body.block);
    return answer(exchange.reply, await this.retractions.start(params.board, target, blockSec, idemKey));
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
