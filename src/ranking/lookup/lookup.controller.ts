import { Body, Param, Query } from '@nestjs/common';
import { PostedWindowRead } from '../../access/access.decorators';
import { ErrorResponse, RedisBackedController } from '../../edge/route-decorators';
import { BoardParams } from '../dto/board.dto';
import { LookupDto, LookupQuery, LookupResultDto } from '../dto/lookup.dto';
import { Charge, ReadCharge } from '../../governance/read-charge';
import {
  COUNT_SHARD_WEIGHT,
  LOOKUP_COUNTS_PER_CALL,
  LOOKUP_COUNTS_PER_READ,
  LOOKUP_IDS_PER_CALL,
  LOOKUP_ITEMS,
  LOOKUP_NODE_UNITS_PER_CALL,
  METRIC_COUNTS_PER_CALL,
} from '../core/ranking.limits';
import { COUNT_WEIGHT_DOC } from '../options/registry';
import { LookupService } from './lookup.service';

@RedisBackedController('ranking')
export class LookupController {
  constructor(private readonly lookups: LookupService) {}

  @PostedWindowRead(
    'boards/:board/lookup',
    {
      summary: 'Scores and ranks of given ids in a window',
      description: `${LOOKUP_ITEMS.min}-${LOOKUP_ITEMS.max} ids, answered in the order given; an id the window does not hold answers score 0 and rank null. rank is the board rank, or with relative: true the competition rank among the ids given. Function calls of at most ${LOOKUP_IDS_PER_CALL} ids: on a sharded board, per shard holding some of the ids, then for board ranks calls of at most ${LOOKUP_NODE_UNITS_PER_CALL} weighted units each (its counts and ${COUNT_SHARD_WEIGHT} a shard); on a board with metrics, the rows' counts of every metric in calls of their own. Reads windows only: a view's name is a 400. Costs: board ranks on a sharded board count ids x shards${COUNT_WEIGHT_DOC}, otherwise ids; a row's count of each metric weighs ${LOOKUP_COUNTS_PER_CALL / METRIC_COUNTS_PER_CALL} of a count; every ${LOOKUP_COUNTS_PER_READ} counts spend one read of the client's read rate budget, and every call at least one (429 RATE_LIMITED past it), and a lookup of more than LOOKUP_COUNTS_PER_REQUEST counts (default 6 000) is a 422 REQUEST_TOO_COSTLY naming the most ids the board takes.`,
    },
    LookupResultDto,
  )
  @ErrorResponse(422, 'REQUEST_TOO_COSTLY: more counts than one lookup may (the message names the most ids)')
  lookup(
    @Param() params: BoardParams,
    @Query() query: LookupQuery,
    @Body() body: LookupDto,
    @Charge(1) admit: ReadCharge,
  ): Promise<LookupResultDto> {
    return this.lookups.lookup({
      name: params.board,
      window: body.window,
      items: body.items,
      relative: body.relative ?? false,
      withData: query.data ?? false,
      segment: query.segment,
      metric: query.metric,
      admit,
    });
  }
}
