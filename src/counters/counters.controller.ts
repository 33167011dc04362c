import { Body, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { FastRoute } from '../edge/fast-routes';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import { answer } from '../edge/retry-safe';
import { ErrorResponse, RedisBackedController, RetrySafe } from '../edge/route-decorators';
import { AdminDelete, KeyedRoute } from '../access/access.decorators';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GrowthQuotas } from '../governance/growth-quotas';
import { NamePageQuery, namePage } from '../common/dto';
import { DEFAULT_LIST_PAGE_ITEMS, PAGE_LIMIT_ITEMS } from '../common/limits';
import { DEFAULT_COUNT, MAX_FUTURE_SKEW_SEC } from './counters.limits';
import { CountersService } from './counters.service';
import {
  CounterListDto,
  CounterParams,
  CounterSeriesDto,
  IncrementCounterDto,
  IncrementCounterResultDto,
  ReadCounterQuery,
} from './dto/counter.dto';

const RETENTION_NOTE =
  'Each precision p keeps its newest N slices (N = COUNTER_SAMPLES, default 120): a slice start t is kept while t > now - N x p.';

@RedisBackedController('counters')
export class CountersController {
  constructor(
    private readonly counters: CountersService,
    private readonly quotas: GrowthQuotas,
  ) {}

  @Post('counters/:name/increment')
  @FastRoute()
  @KeyedRoute('write', 'name')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Add a count to a counter at every precision',
    description: `One atomic step. With \`at\`, a late sample lands in the slice of \`at\` at every precision that still keeps it; older than every retention or more than ${MAX_FUTURE_SKEW_SEC} s ahead is a 400. ${RETENTION_NOTE}`,
  })
  @ApiResponse({ status: 200, type: IncrementCounterResultDto })
  @ErrorResponse(409, 'CAPACITY_REACHED: the count would start a new counter beyond MAX_COUNTERS (nothing applied)')
  @RetrySafe()
  async increment(
    @Param() params: CounterParams,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: IncrementCounterDto = {},
  ): Promise<IncrementCounterResultDto> {
    const { idemKey, budget } = this.quotas.sentWith(request);
    const count = body.count ?? DEFAULT_COUNT;
    return answer(reply, await this.counters.increment(params.name, count, body.at, idemKey, budget));
  }

  @Get('counters/:name')
  @KeyedRoute('read', 'name')
  @ApiOperation({ summary: 'Samples of one precision of a counter, oldest first', description: RETENTION_NOTE })
  @ApiResponse({ status: 200, type: CounterSeriesDto })
  @ErrorResponse(404, 'Unknown counter')
  read(@Param() params: CounterParams, @Query() query: ReadCounterQuery): Promise<CounterSeriesDto> {
    return this.counters.read(params.name, query.precision, { from: query.from, to: query.to, fill: query.fill });
  }

  @Get('counters')
  @KeyedRoute('read')
  @ApiOperation({
    summary: 'List counters (paged, sorted by name)',
    description: `limit 1-${PAGE_LIMIT_ITEMS.max} (default ${DEFAULT_LIST_PAGE_ITEMS}), and offset or cursor (not both). A cursor page costs the same at any depth; an offset page grows with the offset.`,
  })
  @ApiResponse({ status: 200, type: CounterListDto })
  list(@Query() query: NamePageQuery): Promise<CounterListDto> {
    return this.counters.list(namePage(query));
  }

  @AdminDelete(
    'admin/counters/:name',
    { summary: 'Delete a counter: every precision and its index entries, in one atomic step' },
    'Unknown counter',
  )
  async delete(@Param() params: CounterParams): Promise<void> {
    await this.counters.delete(params.name);
  }
}
