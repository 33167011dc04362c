import { Body, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import { Exchange, WriteExchange } from '../edge/retry-safe';
import { ErrorResponse, RedisBackedController, RetrySafe } from '../edge/route-decorators';
import { AdminRead, KeyedRoute } from '../access/access.decorators';
import { GrowthQuotas } from '../governance/growth-quotas';
import { PageQuery } from '../common/dto';
import { DEFAULT_LIST_PAGE_ITEMS } from '../common/limits';
import {
  RecordDto,
  RecordResultDto,
  SlowestDto,
  SlowestQuery,
  StatsListDto,
  StatsParams,
  StatsQuery,
  StatsViewDto,
} from './dto/stats.dto';
import { StatsService } from './stats.service';
import { DEFAULT_SLOWEST_ITEMS, SLOWEST_KEPT_CONTEXTS } from './stats.limits';

const HOUR_NOTE = 'Hours are UTC hours; the current and the previous hour are kept.';

@RedisBackedController('stats')
export class StatsController {
  constructor(
    private readonly stats: StatsService,
    private readonly quotas: GrowthQuotas,
  ) {}

  @Post('stats/:context/:type')
  @KeyedRoute('write', 'context')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Record a value',
    description: `One atomic step updates count, sum, sum of squares, min, max and the quantile histogram of the current hour, rolling the hour over first when it has changed. ${HOUR_NOTE}`,
  })
  @ApiResponse({ status: 200, type: RecordResultDto })
  @ErrorResponse(
    409,
    'CAPACITY_REACHED: the value would start a new context/type pair beyond MAX_STATS_PAIRS (nothing recorded)',
  )
  @RetrySafe()
  record(
    @Param() params: StatsParams,
    @Body() body: RecordDto,
    @Exchange() exchange: WriteExchange,
  ): Promise<RecordResultDto> {
    const { context, type } = params;
    return this.quotas.write(exchange, (sent) =>
      this.stats.record(context, type, body.value, sent.idemKey, sent.budget),
    );
  }

  @Get('stats/:context/:type')
  @KeyedRoute('read', 'context')
  @ApiOperation({
    summary: 'Statistics of an hour',
    description: `Average, sample standard deviation and p50/p90/p99 (within 1 %). ${HOUR_NOTE}`,
  })
  @ApiResponse({ status: 200, type: StatsViewDto })
  @ErrorResponse(404, 'Nothing recorded in that hour')
  read(@Param() params: StatsParams, @Query() query: StatsQuery): Promise<StatsViewDto> {
    return this.stats.read(params.context, params.type, query.hour ?? 'current') as Promise<StatsViewDto>;
  }

  @AdminRead(
    'admin/stats/slowest',
    {
      summary: 'Routes with the slowest average access time',
      description: `From the slowest list (the ${SLOWEST_KEPT_CONTEXTS} slowest contexts), updated by every access-time flush with the current hour's average.`,
    },
    SlowestDto,
  )
  async slowest(@Query() query: SlowestQuery): Promise<SlowestDto> {
    return { items: await this.stats.slowest(query.limit ?? DEFAULT_SLOWEST_ITEMS) };
  }

  @AdminRead(
    'admin/stats',
    {
      summary: 'Contexts and types recorded in the current or previous hour',
      description: 'Paged; ordered by latest hour, then context and type.',
    },
    StatsListDto,
  )
  list(@Query() query: PageQuery): Promise<StatsListDto> {
    return this.stats.list(query.offset ?? 0, query.limit ?? DEFAULT_LIST_PAGE_ITEMS);
  }
}
