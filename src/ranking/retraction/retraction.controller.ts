import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AdminRoute } from '../../access/access.decorators';
import { parseDurationSec } from '../../common/duration';
import { InvalidInputError } from '../../common/errors';
import { ErrorResponse, RedisBackedController } from '../../edge/route-decorators';
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
    summary: "Retract an actor's events from every window, view and unique count",
    description:
      'Answers 202 once the retraction is recorded (and its block applied); it runs on in bounded steps. Snapshots and archives already taken are not rewritten (see docs/api.md).',
  })
  @ApiResponse({ status: 202, type: RetractionDto })
  @ErrorResponse(
    400,
    'INVALID_INPUT: neither or both of actor and item, an item (not supported yet), a bad block, a board without actors',
  )
  @ErrorResponse(404, 'BOARD_NOT_FOUND')
  start(@Param() params: BoardParams, @Body() body: StartRetractionDto): Promise<RetractionView> {
    if (body.item !== undefined)
      throw new InvalidInputError('item: retracting an item is not supported yet; retract actors (actor)');
    if (body.actor === undefined) throw new InvalidInputError('actor: name the actor to retract');
    const blockSec = body.block === undefined ? undefined : parseDurationSec(body.block);
    return this.retractions.start(params.board, { actor: body.actor, blockSec });
  }

  @Get('admin/boards/:board/retractions/:id')
  @AdminRoute()
  @ApiOperation({ summary: "A retraction's progress: state and what it took out so far" })
  @ApiResponse({ status: 200, type: RetractionDto })
  @ErrorResponse(404, 'BOARD_NOT_FOUND, RETRACTION_NOT_FOUND')
  get(@Param() params: RetractionParams): Promise<RetractionView> {
    return this.retractions.get(params.board, params.id);
  }
}
