import { Body, Controller, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { KeyedRoute } from '../../access/access.decorators';
import { ErrorResponse, RedisBackedController } from '../../edge/route-decorators';
import { BoardParams } from '../dto/board.dto';
import { LookupDto, LookupQuery, LookupResultDto } from '../dto/lookup.dto';
import { LOOKUP_ITEMS } from '../core/ranking.limits';
import { LookupService } from './lookup.service';

@ApiTags('ranking')
@RedisBackedController()
@Controller()
export class LookupController {
  constructor(private readonly lookups: LookupService) {}

  @Post('boards/:board/lookup')
  @KeyedRoute('read', 'board')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Scores and ranks of given ids in a window',
    description: `${LOOKUP_ITEMS.min}-${LOOKUP_ITEMS.max} ids, answered in the order given; an id the window does not hold answers score 0 and rank null. rank is the board rank, or with relative: true the competition rank among the ids given. One function call on an unsharded board; on a sharded one, one per shard holding some of the ids, then for board ranks one per Redis node. Reads windows only: a view's name is a 400.`,
  })
  @ApiResponse({ status: 200, type: LookupResultDto })
  @ErrorResponse(404, 'BOARD_NOT_FOUND, WINDOW_NOT_FOUND')
  lookup(@Param() params: BoardParams, @Query() query: LookupQuery, @Body() body: LookupDto): Promise<LookupResultDto> {
    return this.lookups.lookup({
      name: params.board,
      window: body.window,
      items: body.items,
      relative: body.relative ?? false,
      withData: query.data ?? false,
      segment: query.segment,
    });
  }
}
