import { Param, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { WindowRead } from '../../access/access.decorators';
import { ErrorResponse, RedisBackedController } from '../../edge/route-decorators';
import { Charge, ReadCharge } from '../../governance/read-charge';
import { DEFAULT_TOP_ITEMS } from '../core/ranking.limits';
import { ArchiveQuery, ArchiveResultDto, ArchivesQuery, ArchivesResultDto } from '../dto/archive.dto';
import { BoardParams } from '../dto/board.dto';
import { ARCHIVE_ROWS_PER_READ, DEFAULT_ARCHIVE_PAGE } from '../options/calendar/calendar.limits';
import { ArchivesService } from './archives.service';

/**
 * The operation ids these routes had in the OpenAPI document before they had a controller of their own:
 * generated clients name their methods by them. Applied first, so the route's own ApiOperation merges
 * its summary over this one's empty default.
 */
function operationIdOf(method: string) {
  return { operationId: `RankingController_${method}` };
}

/** GET …/archive and …/archives: a calendar window's closed periods as they stood when each closed. */
@RedisBackedController('ranking')
export class ArchivesController {
  constructor(private readonly calendars: ArchivesService) {}

  @WindowRead(
    'boards/:board/archive',
    "A calendar window's final standings of a closed period",
    "The archive of the closed period holding `at` (default: the latest kept). A calendar window with `archive` keeps its top rows once at each period end, as they stood when the period closed. On a board with metrics, a page whose rows' other counts would take more than a read's bound answers fewer rows than `limit` (its first rows whose counts fit, at least one): `nextOffset` reads on.",
    ArchiveResultDto,
  )
  @ErrorResponse(404, 'ARCHIVE_NOT_FOUND: the window keeps no archive, or none of the period holding `at`')
  @ErrorResponse(
    422,
    `REQUEST_TOO_COSTLY: on a sharded board, (offset + limit) x shards past ${ARCHIVE_ROWS_PER_READ} rows, or a moderated page reaching past the rows a shard may read`,
  )
  @ErrorResponse(400, 'INVALID_INPUT: the window is not a calendar window')
  @ApiOperation(operationIdOf('archive'))
  archive(@Param() params: BoardParams, @Query() query: ArchiveQuery, @Charge() charge: ReadCharge) {
    const page = { offset: query.offset ?? 0, limit: query.limit ?? DEFAULT_TOP_ITEMS };
    const { window, at, segment, metric } = query;
    return this.calendars.archive(params.board, window, at, page, { segment, metric, admit: charge });
  }

  @WindowRead(
    'boards/:board/archives',
    "A calendar window's kept archives",
    `Closed periods with their final standings, newest first, a page at a time (\`nextCursor\`). Rows are cut inside Redis: a page answers at most ${ARCHIVE_ROWS_PER_READ} rows read over all shards, so it may hold fewer periods than \`limit\`, or (\`items\`, or a sharded board) fewer rows of each: \`nextOffset\` then reads on with GET /boards/:board/archive. On a board with metrics, a page whose rows' other counts would take more than a read's bound is cut the same way to its first rows whose counts fit (at least one).`,
    ArchivesResultDto,
  )
  @ErrorResponse(404, 'ARCHIVE_NOT_FOUND: the window keeps no archive')
  @ErrorResponse(400, 'INVALID_INPUT: the window is not a calendar window')
  @ApiOperation(operationIdOf('archives'))
  archives(@Param() params: BoardParams, @Query() q: ArchivesQuery, @Charge() charge: ReadCharge) {
    const [limit, rows] = [q.limit ?? DEFAULT_ARCHIVE_PAGE, { perPeriod: q.items }];
    return this.calendars.archives(params.board, q.window, limit, q.cursor, rows, {
      segment: q.segment,
      metric: q.metric,
      admit: charge,
    });
  }
}
