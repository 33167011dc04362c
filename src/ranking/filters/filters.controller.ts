import { Body, Param } from '@nestjs/common';
import { MinActorsRead, PostedWindowRead } from '../../access/access.decorators';
import { ErrorResponse, RedisBackedController } from '../../edge/route-decorators';
import { Charge, ReadCharge } from '../../governance/read-charge';
import { BoardParams } from '../dto/board.dto';
import { TopResultDto } from '../dto/item.dto';
import { EXCLUDE_ITEMS_MAX, GROUP_SCAN_ROWS, groupScan } from '../options/groups/groups.limits';
import { SPAN_STAGE_FIELDS_PER_CALL, SPAN_STAGED_READS_PER_SHARD } from '../core/ranking.limits';
import { FilteredPage, FiltersService } from './filters.service';
import { QueryDto } from './query.dto';

/** How a filtered read goes, for the routes' descriptions. */
export const FILTERED_READ_NOTE = `Rows keep their board rank and carry no previousRank (null). Each shard is scanned in calls of at most ${groupScan().scan} rows, at most ${groupScan().calls} calls per shard, each resuming where the last stopped (the exclusions travel into each call, so a full page past ${EXCLUDE_ITEMS_MAX} excluded items takes ${GROUP_SCAN_ROWS / groupScan().scan} calls on one shard); a page the scan could not fill (one group, or the excluded ones, holding the whole head; few items with minActors actors in it) answers the rows it found with truncated: true. Every call past the first spends one read of the client's read rate budget.`;

@RedisBackedController('ranking')
export class FiltersController {
  constructor(private readonly filters: FiltersService) {}

  @PostedWindowRead(
    'boards/:board/query',
    {
      summary: "A viewer's filtered page of a window",
      description: `A page like top without the excluded items and the items of excluded groups, at most perGroup rows of one group, only items with at least minActors distinct actors in the window (or span). ${FILTERED_READ_NOTE} With span the span's sums (as GET top?span reads them; rows carry no metrics) are summed once for the read and kept until it ends, in calls of at most ${SPAN_STAGE_FIELDS_PER_CALL} slot fields a shard (the same per-shard field bound, 422 SPAN_TOO_COSTLY; at most ${SPAN_STAGED_READS_PER_SHARD} such reads at once on a window of a board shard, 503 SPAN_READS_BUSY), then scanned in calls of ${groupScan().scan} rows, at most ${groupScan().calls} calls per shard; with minActors too each item's distinct actors over the span are counted from every actor contribution of its slots (exact), those counted against that bound beside the slot fields, and the rows scanned as without minActors. A view (window) is filtered alike: its rows and view ranks, minActors counted in its window; span on a view is a 400. On a ties: first board rows keep their strict rank.`,
    },
    TopResultDto,
  )
  @ErrorResponse(
    400,
    'INVALID_INPUT: a bad body, span on a view or not fitting the window, perGroup or exclude.groups on a board without groups, minActors on a board without actors',
  )
  @MinActorsRead()
  async query(
    @Param() params: BoardParams,
    @Body() body: QueryDto,
    @Charge() admit: ReadCharge,
  ): Promise<FilteredPage> {
    const page = await this.filters.read({
      board: params.board,
      window: body.window,
      segment: body.segment,
      span: body.span,
      offset: body.offset ?? 0,
      limit: body.limit ?? 100,
      perGroup: body.perGroup,
      minActors: body.minActors,
      metric: body.metric,
      excludeItems: (body.exclude?.items ?? []).map((id) => id.normalize('NFC')),
      excludeGroups: (body.exclude?.groups ?? []).map((id) => id.normalize('NFC')),
      admit,
    });
    return { ...page, items: page.items.map((row) => ({ ...row, previousRank: null })) } as FilteredPage;
  }
}
