import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiExtraModels, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AdminGuard } from '../common/admin.guard';
import { BoardListDto, BoardParams, BoardViewDto, PutBoardDto, PutBoardQuery } from './dto/board.dto';
import {
  AroundQuery,
  AroundResultDto,
  BatchIncrementDto,
  BatchResultDto,
  IncrementDto,
  IncrementResultDto,
  ItemParams,
  ItemResultDto,
  LikeDto,
  LikeParams,
  LikeResultDto,
  StandingDto,
  TopQuery,
  TopResultDto,
  WindowQuery,
} from './dto/item.dto';
import { DEFAULT_AMOUNT, DEFAULT_RADIUS_ITEMS, DEFAULT_TOP_ITEMS, MAX_SHARDED_DEPTH_ITEMS } from './ranking.limits';
import { BoardView, RankingService } from './ranking.service';

const WINDOW_NOTE =
  'A window of period P and interval I counts the newest P/I slots, the current one included: between P - I and P seconds of history; `from`/`to` say exactly which.';

@ApiTags('ranking')
@ApiExtraModels(StandingDto)
@ApiResponse({ status: 400, description: 'Bad input; the message names the field' })
@ApiResponse({ status: 503, description: 'Redis is unreachable' })
@Controller()
export class RankingController {
  constructor(private readonly ranking: RankingService) {}

  @Put('admin/boards/:board')
  @UseGuards(AdminGuard)
  @ApiBearerAuth()
  @ApiOperation({
    summary: 'Create a board or change its windows',
    description:
      '201 when created, 200 when identical or updated. 409 when a window would change or disappear, unless reset=true.',
  })
  @ApiResponse({ status: 201, type: BoardViewDto })
  @ApiResponse({ status: 200, type: BoardViewDto })
  @ApiResponse({ status: 409, description: 'A window would change (use reset=true)' })
  async putBoard(
    @Param() params: BoardParams,
    @Query() query: PutBoardQuery,
    @Body() body: PutBoardDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<BoardView> {
    const result = await this.ranking.putBoard(params.board, body.windows, body.shards, query.reset ?? false);
    void reply.status(result.created ? 201 : 200);
    return result.board;
  }

  @Delete('admin/boards/:board')
  @UseGuards(AdminGuard)
  @ApiBearerAuth()
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a board and every key it has' })
  @ApiResponse({ status: 204, description: 'Deleted' })
  @ApiResponse({ status: 404, description: 'Unknown board' })
  async deleteBoard(@Param() params: BoardParams): Promise<void> {
    await this.ranking.deleteBoard(params.board);
  }

  @Get('boards')
  @ApiOperation({ summary: 'List boards' })
  @ApiResponse({ status: 200, type: BoardListDto })
  async listBoards(): Promise<BoardListDto> {
    return { boards: await this.ranking.listBoards() };
  }

  @Get('boards/:board')
  @ApiOperation({ summary: 'One board and its windows (seconds)' })
  @ApiResponse({ status: 200, type: BoardViewDto })
  @ApiResponse({ status: 404, description: 'Unknown board' })
  getBoard(@Param() params: BoardParams): Promise<BoardView> {
    return this.ranking.getBoard(params.board);
  }

  @Post('boards/:board/items/:item/increment')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Add an amount to an item in every window',
    description: "One atomic step; answers each window's new score and rank.",
  })
  @ApiResponse({ status: 200, type: IncrementResultDto })
  @ApiResponse({ status: 404, description: 'Unknown board' })
  @ApiResponse({
    status: 409,
    description:
      'The board changed during the request (retry; on a sharded board the message says when the write was already applied)',
  })
  increment(@Param() params: ItemParams, @Body() body: IncrementDto = {}): Promise<IncrementResultDto> {
    return this.ranking.increment(params.board, params.item, body.amount ?? DEFAULT_AMOUNT);
  }

  @Post('boards/:board/increments')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Add amounts to many items at once',
    description:
      'If any entry is invalid the answer is 400 naming it and nothing is applied. One atomic step on an unsharded board; on a sharded board one atomic step per shard.',
  })
  @ApiResponse({ status: 200, type: BatchResultDto })
  @ApiResponse({ status: 404, description: 'Unknown board' })
  @ApiResponse({
    status: 409,
    description:
      'The board changed during the request (retry; on a sharded board the message says when the write was already applied)',
  })
  incrementBatch(@Param() params: BoardParams, @Body() body: BatchIncrementDto): Promise<BatchResultDto> {
    return this.ranking.incrementBatch(
      params.board,
      body.items.map((entry) => ({ item: entry.item, amount: entry.amount ?? DEFAULT_AMOUNT })),
    );
  }

  @Post('boards/:board/items/:item/likes')
  @HttpCode(200)
  @ApiOperation({
    summary: "Count a user's like once",
    description: 'A second like by the same user while the first is inside any window of the board is not counted.',
  })
  @ApiResponse({ status: 200, type: LikeResultDto })
  @ApiResponse({ status: 404, description: 'Unknown board' })
  @ApiResponse({
    status: 409,
    description:
      'The board changed during the request (retry; on a sharded board the message says when the write was already applied)',
  })
  like(@Param() params: ItemParams, @Body() body: LikeDto): Promise<LikeResultDto> {
    return this.ranking.like(params.board, params.item, body.userId, false);
  }

  @Delete('boards/:board/items/:item/likes/:userId')
  @ApiOperation({
    summary: 'Take a like back',
    description: 'Removes the like from every window that still holds it; counted is false if there was none.',
  })
  @ApiResponse({ status: 200, type: LikeResultDto })
  @ApiResponse({ status: 404, description: 'Unknown board' })
  @ApiResponse({
    status: 409,
    description:
      'The board changed during the request (retry; on a sharded board the message says when the write was already applied)',
  })
  unlike(@Param() params: LikeParams): Promise<LikeResultDto> {
    return this.ranking.like(params.board, params.item, params.userId, true);
  }

  @Get('boards/:board/top')
  @ApiOperation({ summary: 'Top items of a window', description: WINDOW_NOTE })
  @ApiResponse({ status: 200, type: TopResultDto })
  @ApiResponse({ status: 404, description: 'Unknown board or window' })
  @ApiResponse({
    status: 400,
    description: `Bad query; on a sharded board also offset + limit over ${MAX_SHARDED_DEPTH_ITEMS}`,
  })
  top(@Param() params: BoardParams, @Query() query: TopQuery): Promise<TopResultDto> {
    return this.ranking.top(params.board, query.window, query.offset ?? 0, query.limit ?? DEFAULT_TOP_ITEMS);
  }

  @Get('boards/:board/items/:item')
  @ApiOperation({ summary: "An item's score, rank and percentile in a window", description: WINDOW_NOTE })
  @ApiResponse({ status: 200, type: ItemResultDto })
  @ApiResponse({ status: 404, description: 'Unknown board or window' })
  item(@Param() params: ItemParams, @Query() query: WindowQuery): Promise<ItemResultDto> {
    return this.ranking.item(params.board, query.window, params.item);
  }

  @Get('boards/:board/items/:item/around')
  @ApiOperation({
    summary: 'An item and its neighbours in a window',
    description: `${WINDOW_NOTE} Empty when the item holds nothing in the window.`,
  })
  @ApiResponse({ status: 200, type: AroundResultDto })
  @ApiResponse({ status: 404, description: 'Unknown board or window' })
  around(@Param() params: ItemParams, @Query() query: AroundQuery): Promise<AroundResultDto> {
    return this.ranking.around(params.board, query.window, params.item, query.radius ?? DEFAULT_RADIUS_ITEMS);
  }
}
