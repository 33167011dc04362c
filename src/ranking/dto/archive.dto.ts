import { ArchiveMetricCountsProperty } from '../options/metrics/metrics.option';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CompiledValidation, NAME_FIELD, optional } from '../../common/compiled-checks';
import { OptionalIntProperty, OptionalNameProperty, PageLimit, PageOffset } from '../../common/dto';
import { PAGE_LIMIT_ITEMS, PAGE_OFFSET_ITEMS, UNIX_SEC } from '../../common/limits';
import { DEFAULT_TOP_ITEMS } from '../core/ranking.limits';
import {
  ARCHIVE_PAGE,
  ARCHIVE_PERIOD_ROWS,
  ARCHIVE_ROWS_PER_READ,
  DEFAULT_ARCHIVE_PAGE,
} from '../options/calendar/calendar.limits';
import { TiebreakRowProperty } from './row-fields';
import { SegmentQueryProperty } from './segment.dto';
import { METRIC_FIELD, MetricProperty } from '../options/metrics/metrics.option';

const WindowProperty = () =>
  OptionalNameProperty("A calendar window's name (default: the board's first window)", 'week');
const WINDOW_FIELD = optional(NAME_FIELD);
const UNIX_SEC_QUERY = optional({ kind: 'int', range: UNIX_SEC, fromQuery: true });

/** What both archive reads name first: the calendar window, the segment and the metric read. */
class ArchiveSourceQuery {
  @WindowProperty()
  window?: string;

  @SegmentQueryProperty()
  segment?: string;

  @MetricProperty('The counter whose archives are read')
  metric?: string;
}
const ARCHIVE_SOURCE_FIELDS = { window: WINDOW_FIELD, segment: WINDOW_FIELD, metric: METRIC_FIELD };

@CompiledValidation({
  ...ARCHIVE_SOURCE_FIELDS,
  at: UNIX_SEC_QUERY,
  limit: optional({ kind: 'int', range: PAGE_LIMIT_ITEMS, fromQuery: true }),
  offset: optional({ kind: 'int', range: PAGE_OFFSET_ITEMS, fromQuery: true }),
})
export class ArchiveQuery extends ArchiveSourceQuery {
  @OptionalIntProperty(
    UNIX_SEC,
    { description: 'Unix s: the closed period holding it (default: the latest kept)' },
    { fromQuery: true },
  )
  at?: number;

  @PageLimit(DEFAULT_TOP_ITEMS)
  limit?: number;

  @PageOffset()
  offset?: number;
}

@CompiledValidation({
  ...ARCHIVE_SOURCE_FIELDS,
  limit: optional({ kind: 'int', range: ARCHIVE_PAGE, fromQuery: true }),
  cursor: UNIX_SEC_QUERY,
  items: optional({ kind: 'int', range: ARCHIVE_PERIOD_ROWS, fromQuery: true }),
})
export class ArchivesQuery extends ArchiveSourceQuery {
  @OptionalIntProperty(
    ARCHIVE_PAGE,
    { default: DEFAULT_ARCHIVE_PAGE, description: 'Periods per page' },
    { fromQuery: true },
  )
  limit?: number;

  @OptionalIntProperty(
    UNIX_SEC,
    { description: 'The page after the one whose nextCursor this is (default: the newest periods)' },
    { fromQuery: true },
  )
  cursor?: number;

  @OptionalIntProperty(
    ARCHIVE_PERIOD_ROWS,
    {
      description: `Rows of each period (default: all the archive keeps). A page answers at most ${ARCHIVE_ROWS_PER_READ} rows read over all shards: fewer periods then (nextCursor goes on), or fewer rows of each (nextOffset)`,
    },
    { fromQuery: true },
  )
  items?: number;
}

export class ArchiveRowDto {
  @ApiProperty({ type: 'integer', minimum: 1 }) rank!: number;
  @ApiProperty() item!: string;
  @ApiProperty({ type: Number }) score!: number;
  @TiebreakRowProperty() tiebreak?: number;
  @ArchiveMetricCountsProperty() metrics?: Record<string, number>;
}

export class ArchivedPeriodDto {
  @ApiProperty({ type: 'integer', description: 'Start of the closed period: local midnight (unix s)' }) from!: number;
  @ApiProperty({ type: 'integer', description: 'End of the closed period: the next local midnight (unix s)' })
  to!: number;
  @ApiProperty({ type: [ArchiveRowDto], description: "The period's final standings, highest score first" })
  items!: ArchiveRowDto[];
  @ApiPropertyOptional({
    nullable: true,
    type: 'integer',
    description:
      "Pass as `offset` to GET /boards/:board/archive (`at` = from) for the period's next rows; null when none follow",
  })
  nextOffset!: number | null;
}

export class ArchiveResultDto extends ArchivedPeriodDto {
  @ApiProperty() board!: string;
  @ApiProperty() window!: string;
  @ApiProperty({ example: 'Europe/Berlin' }) timeZone!: string;
}

export class ArchivesResultDto {
  @ApiProperty() board!: string;
  @ApiProperty() window!: string;
  @ApiProperty({ example: 'Europe/Berlin' }) timeZone!: string;
  @ApiProperty({ type: [ArchivedPeriodDto], description: 'Kept periods, newest first' }) periods!: ArchivedPeriodDto[];
  @ApiPropertyOptional({
    nullable: true,
    type: 'integer',
    description: 'Pass as `cursor` for the next page; null at the end',
  })
  nextCursor!: number | null;
}
