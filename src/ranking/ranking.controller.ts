import { Body, Delete, Get, Param, Post, Put, Query, Req, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiResponse } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GrowthQuotas } from '../governance/growth-quotas';
import { RateLimitGuard } from '../governance/rate-limit.guard';
import { Charge, ReadCharge } from '../governance/read-charge';
import { entriesOfBatch, RateCost } from '../governance/rate-cost';
import { answer, Exchange, WriteExchange } from '../edge/retry-safe';
import { ErrorResponse, RedisBackedController } from '../edge/route-decorators';
import { FastRoute } from '../edge/fast-routes';
import {
  AdminDelete,
  AdminRoute,
  BoardWrite,
  KeyedRoute,
  MinActorsRead,
  WindowRead,
} from '../access/access.decorators';
import { SegmentListDto } from './dto/segment.dto';
import { BoardParams, PutBoardDto, PutBoardQuery } from './dto/board.dto';
import { BoardListDto, BoardViewDto } from './dto/board-view.dto';
import {
  AroundResultDto,
  BatchIncrementDto,
  BatchResultDto,
  IncrementDto,
  IncrementResultDto,
  ItemParams,
  LikeDto,
  LikeParams,
  LikeResultDto,
  StandingDto,
  HistoryQuery,
  HistoryResultDto,
  ItemHistoryQuery,
  TopResultDto,
} from './dto/item.dto';
import { ItemHistoryResultDto } from './dto/item-history.dto';
import {
  DEFAULT_AMOUNT,
  DEFAULT_RADIUS_ITEMS,
  DEFAULT_TOP_ITEMS,
  MAX_SHARDED_DEPTH_ITEMS,
} from './core/ranking.limits';
import {
  SEGMENT_PAGE_UNITS_PER_CALL,
  SEGMENT_PAGE_UNITS_PER_READ,
  SEGMENT_PAGE_UNITS_PER_REQUEST,
} from './options/segments/segments.limits';
import { AroundDataQuery, ItemDataQuery, TopDataQuery } from './dto/lookup.dto';
import { ModeratedItemResultDto } from './dto/moderation.dto';
import { ItemDataService } from './items/items.service';
import { BoardView, RankingService, ReadOptions } from './ranking.service';
import { WriteCommands } from './writes/write-commands';
import { WritePipeline } from './writes/write-pipeline';
import { NamePageQuery, namePage } from '../common/dto';
import { DEFAULT_LIST_PAGE_ITEMS, PAGE_LIMIT_ITEMS } from '../common/limits';
import { optionsOfPut } from './options/registry';

const WINDOW_NOTE =
  "A window of period P and interval I counts the newest P/I slots, the current one included: between P - I and P seconds of history; `from`/`to` say exactly which. `window` may also name one of the board's trending views (decay, hot, rising): the answer then names its `mode`, its `from`/`to` are those of the window the view reads, and rising rows add `observed`, `expected`, `phase` and `since`.";

const PUT_BOARD_NOTE =
  "201 when created, 200 when identical or updated. 409 when a window would change or disappear, unless reset=true. `views` declares trending views (decay, hot, rising) over the windows; omitted, the stored views are kept; a new or changed view is built from its windows' live slots. 400 BOARD_WRITE_TOO_COSTLY when the board's costliest single write (every segment an event may name, an actor) would weigh more than WRITE_COST_PER_CALL, unless the stored board weighs as much.";
const PUT_BOARD_400 =
  'INVALID_INPUT (the message names the field), or BOARD_WRITE_TOO_COSTLY: one write would weigh more than WRITE_COST_PER_CALL';

/** A single write past the per-call bound: possible only on a board declared past it (BOARD_WRITE_TOO_COSTLY). */
const ONE_WRITE_TOO_COSTLY =
  'REQUEST_TOO_COSTLY: on a board declared before WRITE_COST_PER_CALL (or under a higher one) whose costliest write passes it, a write whose own call would weigh more (its segments and actor) is refused, nothing applied, naming how many segments fit';

const LIKE_TAKE_BACK_PENDING =
  'LIKE_TAKE_BACK_PENDING: an unlike stopped midway is still taking this like out of its segments, and finishing it first did not settle it (a like sent again finishes it)';

const BATCH_TOO_COSTLY =
  "REQUEST_TOO_COSTLY: the batch's step on some shard past WRITE_COST_PER_CALL, or one entry's own call past it (on a board declared past the bound: the message names how many segments fit)";

/** A read's options from its query (span, segment, metric). */
function readOptionsOf(query: ReadOptions, charge: ReadCharge): ReadOptions {
  return { span: query.span, segment: query.segment, metric: query.metric, charge };
}

@ApiExtraModels(StandingDto)
@RedisBackedController('ranking')
export class RankingController {
  constructor(
    private readonly ranking: RankingService,
    private readonly quotas: GrowthQuotas,
    private readonly commands: WriteCommands,
    /** The writes go to the pipeline itself: the facade (RankingService) would only pass them on. */
    private readonly writes: WritePipeline,
    private readonly itemData: ItemDataService,
    private readonly readBudget: RateLimitGuard,
  ) {}

  @Put('admin/boards/:board')
  @AdminRoute()
  @ApiOperation({ summary: 'Create a board or change its windows', description: PUT_BOARD_NOTE })
  @ApiResponse({ status: 201, type: BoardViewDto })
  @ApiResponse({ status: 200, type: BoardViewDto })
  @ErrorResponse(400, PUT_BOARD_400)
  @ErrorResponse(409, 'BOARD_CONFIG_CONFLICT: a window, the shards or the aggregate would change (use reset=true)')
  @ErrorResponse(409, 'BOARD_BEING_DELETED: a deleted board of this name is still being dropped (repeat in a moment)')
  async putBoard(
    @Param() params: BoardParams,
    @Query() query: PutBoardQuery,
    @Body() body: PutBoardDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<BoardView> {
    const result = await this.ranking.putBoard({
      name: params.board,
      windows: body.windows,
      shards: body.shards,
      reset: query.reset,
      maxItems: body.maxItems,
      views: body.views,
      ...optionsOfPut(body),
    });
    void reply.status(result.created ? 201 : 200);
    return result.board;
  }

  @AdminDelete('admin/boards/:board', { summary: 'Delete a board and every key it has' }, 'BOARD_NOT_FOUND')
  async deleteBoard(@Param() params: BoardParams): Promise<void> {
    await this.ranking.deleteBoard(params.board);
  }

  @Get('boards')
  @KeyedRoute('read')
  @ApiOperation({
    summary: 'List boards (paged, sorted by name)',
    description: `limit 1-${PAGE_LIMIT_ITEMS.max} (default ${DEFAULT_LIST_PAGE_ITEMS}), and offset or cursor (not both).`,
  })
  @ApiResponse({ status: 200, type: BoardListDto })
  listBoards(@Query() query: NamePageQuery): Promise<BoardListDto> {
    return this.ranking.listBoards(namePage(query));
  }

  @Get('boards/:board')
  @KeyedRoute('read', 'board')
  @ApiOperation({ summary: 'One board, its windows and its views (durations in seconds)' })
  @ApiResponse({ status: 200, type: BoardViewDto })
  @ErrorResponse(404, 'BOARD_NOT_FOUND')
  getBoard(@Param() params: BoardParams): Promise<BoardView> {
    return this.ranking.getBoard(params.board);
  }

  @Get('boards/:board/segments')
  @KeyedRoute('read', 'board')
  @ApiOperation({
    summary: "A board's segments holding live data (paged, sorted by name)",
    description: `Each row names a segment and the most items one of its windows lists over the whole board (each window counted over every shard). A segment is drained of its expired slots before it is counted (503 WINDOW_DRAINING while one holds more than a read drains). A segment whose data all expired is not listed (and no longer counts toward segments.max). One call per shard, each of bounded work: a shard looks at about ${SEGMENT_PAGE_UNITS_PER_REQUEST} / shards units (a name 1, a listed segment 1 per window, 5 per window when drained; at most ${SEGMENT_PAGE_UNITS_PER_CALL}), so a page of a sharded board may hold fewer than limit rows with a nextCursor: follow nextCursor until null. An offset past what one page reaches is 422 REQUEST_TOO_COSTLY (use cursor). Every ${SEGMENT_PAGE_UNITS_PER_READ} units spend one read of the client's read rate budget (429 RATE_LIMITED past it).`,
  })
  @ApiResponse({ status: 200, type: SegmentListDto })
  @ErrorResponse(400, 'INVALID_INPUT: a bad query, or a board that takes no segments')
  @ErrorResponse(404, 'BOARD_NOT_FOUND')
  @ErrorResponse(422, 'REQUEST_TOO_COSTLY: an offset past what one page reaches (page with cursor)')
  listSegments(
    @Param() params: BoardParams,
    @Query() query: NamePageQuery,
    @Charge(SEGMENT_PAGE_UNITS_PER_READ) admit: ReadCharge,
  ): Promise<SegmentListDto> {
    return this.ranking.listSegments(params.board, namePage(query), admit);
  }

  @Post('boards/:board/items/:item/increment')
  @FastRoute()
  @BoardWrite(
    'Add an amount to an item in every window',
    "One atomic step; answers each window's new score and rank. With `at`, the event lands in the slot of that time in every window and view whose live span still holds it.",
    IncrementResultDto,
  )
  @ErrorResponse(422, ONE_WRITE_TOO_COSTLY)
  increment(
    @Param() params: ItemParams,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: IncrementDto = {},
  ): Promise<IncrementResultDto> {
    const command = this.commands.incrementOf(params.board, params.item, body, this.quotas.sentWith(reply.request));
    // A `then`, not an async frame: every increment passes here.
    return this.writes.increment(command).then((written) => answer(reply, written));
  }

  @Post('boards/:board/increments')
  @FastRoute()
  @RateCost(entriesOfBatch)
  @BoardWrite(
    'Add amounts to many items at once',
    'If any entry is invalid the answer is 400 naming it and nothing is applied. One atomic step on an unsharded board; on a sharded board one atomic step per shard. Entries with actors or segments weigh their Redis work (more per actor and segment place than their cost units): the entries of a shard past WRITE_COST_PER_CALL of work go in further steps, each atomic, each entry applied once (a retry with the same Idempotency-Key replays every step); a refusal of a later step (a blocked actor, a quota) is 409 BATCH_PARTIAL naming how many entries were applied. A batch whose step on some shard would weigh more than WRITE_COST_PER_CALL (an entry weighs one unit per window, more with views, segments, an actor, a score, ties first or leagues) is 422 REQUEST_TOO_COSTLY, nothing applied, naming how many such entries fit.',
    BatchResultDto,
  )
  @ErrorResponse(422, BATCH_TOO_COSTLY)
  async incrementBatch(
    @Param() params: BoardParams,
    @Body() body: BatchIncrementDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<BatchResultDto> {
    const entries = body.items.map((entry) => ({
      item: entry.item,
      amount: entry.amount ?? (entry.score === undefined ? DEFAULT_AMOUNT : undefined),
      score: entry.score,
      tiebreak: entry.tiebreak,
      at: entry.at,
      createdAt: entry.createdAt,
      segments: entry.segments,
      actor: entry.actor,
      group: entry.group,
      metric: entry.metric,
    }));
    const command = this.commands.batch({ board: params.board, entries }, this.quotas.sentWith(reply.request));
    return answer(reply, await this.writes.incrementBatch(command));
  }

  @Post('boards/:board/items/:item/likes')
  @FastRoute()
  @BoardWrite(
    "Count a user's like once",
    'A second like by the same user while the first is inside any window of the board is not counted.',
    LikeResultDto,
  )
  @ErrorResponse(422, ONE_WRITE_TOO_COSTLY)
  @ErrorResponse(409, LIKE_TAKE_BACK_PENDING)
  async like(
    @Param() params: ItemParams,
    @Body() body: LikeDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<LikeResultDto> {
    const { board, item } = params;
    const command = this.commands.like(
      { board, item, userId: body.userId, atSec: body.at, segments: body.segments },
      this.quotas.sentWith(reply.request),
    );
    return answer(reply, await this.writes.like(command));
  }

  @Delete('boards/:board/items/:item/likes/:userId')
  @BoardWrite(
    'Take a like back',
    'Removes the like from every window that still holds it; counted is false if there was none.',
    LikeResultDto,
  )
  unlike(@Param() params: LikeParams, @Exchange() exchange: WriteExchange): Promise<LikeResultDto> {
    // An unlike creates nothing, but its stored answer counts (quota idempotentAnswers): it carries the budget too.
    const { board, item, userId } = params;
    return this.quotas.write(exchange, (sent) => this.writes.like(this.commands.unlike({ board, item, userId }, sent)));
  }

  @FastRoute()
  @WindowRead('boards/:board/top', 'Top items of a window', WINDOW_NOTE, TopResultDto)
  @ErrorResponse(
    400,
    `INVALID_INPUT: a bad query; on a sharded board also offset + limit over ${MAX_SHARDED_DEPTH_ITEMS}`,
  )
  @MinActorsRead()
  async top(
    @Param() params: BoardParams,
    @Query() query: TopDataQuery,
    @Req() request: FastifyRequest,
  ): Promise<TopResultDto> {
    const admit = this.readBudget.readsOf(request);
    if (query.perGroup !== undefined || query.minActors !== undefined)
      return topFiltered(this.ranking, this.itemData, { board: params.board, query, admit });
    const page = await this.ranking.top(
      params.board,
      query.window,
      query.offset ?? 0,
      query.limit ?? DEFAULT_TOP_ITEMS,
      readOptionsOf(query, this.readBudget.readsOf(request)),
    );
    return query.data ? { ...page, items: await this.itemData.attach(params.board, page.items, true, admit) } : page;
  }

  @FastRoute()
  @WindowRead(
    'boards/:board/items/:item',
    "An item's score, rank and percentile in a window",
    WINDOW_NOTE,
    ModeratedItemResultDto,
  )
  async item(
    @Param() params: ItemParams,
    @Query() query: ItemDataQuery,
    @Req() request: FastifyRequest,
  ): Promise<ModeratedItemResultDto> {
    const options = readOptionsOf(query, this.readBudget.readsOf(request));
    const standing = await this.ranking.item(params.board, query.window, params.item, options);
    const [withData] = await this.itemData.attach(params.board, [standing], query.data);
    return withData;
  }

  @FastRoute()
  @WindowRead(
    'boards/:board/items/:item/around',
    'An item and its neighbours in a window',
    `${WINDOW_NOTE} Empty when the item holds nothing in the window.`,
    AroundResultDto,
  )
  async around(
    @Param() params: ItemParams,
    @Query() query: AroundDataQuery,
    @Req() request: FastifyRequest,
  ): Promise<AroundResultDto> {
    const rows = await this.ranking.around(
      params.board,
      query.window,
      params.item,
      query.radius ?? DEFAULT_RADIUS_ITEMS,
      readOptionsOf(query, this.readBudget.readsOf(request)),
    );
    return { ...rows, items: await this.itemData.attach(params.board, rows.items, query.data) };
  }

  @WindowRead(
    'boards/:board/history',
    "A window's listing at a slot boundary",
    'The snapshot taken at or before `at` (default: the latest). A window keeping snapshots stores its top rows once at each slot boundary, as the listing stood when the slot closed.',
    HistoryResultDto,
  )
  @ErrorResponse(404, 'SNAPSHOT_NOT_FOUND: the window keeps no snapshots, or none at or before `at`')
  history(@Param() params: BoardParams, @Query() query: HistoryQuery, @Charge() charge: ReadCharge) {
    const { window, at, segment, metric } = query;
    return this.ranking.history(params.board, window, at, segment, metric, charge);
  }

  @WindowRead(
    'boards/:board/items/:item/history',
    "An item's rank and score at each kept snapshot",
    "One point per kept snapshot with its boundary in [from, to], oldest first; rank and score null where the item was not among the rows. 503 WINDOW_DRAINING while an archive of a period answered is still being written on another shard (a sharded board's calendar window: each read drains a chunk of it) or of another metric (a board with metrics).",
    ItemHistoryResultDto,
  )
  @ErrorResponse(404, 'SNAPSHOT_NOT_FOUND: the window keeps no snapshots')
  itemHistory(@Param() params: ItemParams, @Query() query: ItemHistoryQuery, @Charge() charge: ReadCharge) {
    const { window, from, to, segment, metric } = query;
    return this.ranking.itemHistory(params.board, window, params.item, from, to, segment, metric, charge);
  }
}

/** GET top with ?perGroup or ?minActors: a filtered read, rows keep their board rank. */
async function topFiltered(
  ranking: RankingService,
  itemData: ItemDataService,
  read: { board: string; query: TopDataQuery; admit: (calls: number) => void },
): Promise<TopResultDto> {
  const { board, query, admit } = read;
  const page = await ranking.topFiltered(board, { ...query, limit: query.limit ?? DEFAULT_TOP_ITEMS }, admit);
  return { ...page, items: await itemData.attach(board, page.items, query.data, admit) };
}
