import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { answer, IdempotencyKey } from '../common/retry-safe';
import { AdminRoute, RetrySafe } from '../common/route-decorators';
import type { FastifyReply } from 'fastify';
import { PageQuery } from '../common/dto';
import { DEFAULT_LIST_PAGE_ITEMS } from '../common/limits';
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

@ApiTags('counters')
@ApiResponse({ status: 400, description: 'Bad input; the message names the field' })
@ApiResponse({ status: 503, description: 'Redis is unreachable' })
@Controller()
export class CountersController {
  constructor(private readonly counters: CountersService) {}

  @Post('counters/:name/increment')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Add a count to a counter at every precision',
    description: `One atomic step. With \`at\`, a late sample lands in the slice of \`at\` at every precision that still keeps it; older than every retention or more than ${MAX_FUTURE_SKEW_SEC} s ahead is a 400. ${RETENTION_NOTE}`,
  })
  @ApiResponse({ status: 200, type: IncrementCounterResultDto })
  @RetrySafe()
  async increment(
    @Param() params: CounterParams,
    @IdempotencyKey() idemKey: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: IncrementCounterDto = {},
  ): Promise<IncrementCounterResultDto> {
    return answer(reply, await this.counters.increment(params.name, body.count ?? DEFAULT_COUNT, body.at, idemKey));
  }

  @Get('counters/:name')
  @ApiOperation({ summary: 'Samples of one precision of a counter, oldest first', description: RETENTION_NOTE })
  @ApiResponse({ status: 200, type: CounterSeriesDto })
  @ApiResponse({ status: 404, description: 'Unknown counter' })
  read(@Param() params: CounterParams, @Query() query: ReadCounterQuery): Promise<CounterSeriesDto> {
    return this.counters.read(params.name, query.precision, { from: query.from, to: query.to, fill: query.fill });
  }

  @Get('counters')
  @ApiOperation({ summary: 'List counters (paged, sorted by name)' })
  @ApiResponse({ status: 200, type: CounterListDto })
  list(@Query() query: PageQuery): Promise<CounterListDto> {
    return this.counters.list(query.offset ?? 0, query.limit ?? DEFAULT_LIST_PAGE_ITEMS);
  }

  @Delete('admin/counters/:name')
  @AdminRoute()
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a counter: every precision and its index entries, in one atomic step' })
  @ApiResponse({ status: 204, description: 'Deleted' })
  @ApiResponse({ status: 404, description: 'Unknown counter' })
  async delete(@Param() params: CounterParams): Promise<void> {
    await this.counters.delete(params.name);
  }
}
