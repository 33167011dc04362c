import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { CompiledValidation, NAME_FIELD } from '../../common/compiled-checks';
import {
  IsDuration,
  IsOptionalNotNull,
  NameProperty,
  OptionalIntProperty,
  OptionalNameProperty,
  ToBool,
} from '../../common/dto';
import { DURATION_SEC } from '../../common/limits';
import { CALENDARS, Calendar, WEEK_STARTS, WeekStart } from '../core/calendar-math';
import {
  ARCHIVE_KEEP,
  ARCHIVE_TOP_ITEMS,
  BOARD_MAX_ITEMS,
  DECAY_MAX_HALF_LIVES_PER_WINDOW,
  DEFAULT_HOT_TAU_SEC,
  DEFAULT_RISING_MIN_COUNT,
  MAX_SLOTS_PER_WINDOW,
  RISING_MIN_COUNT,
  SHARDS_PER_BOARD,
  SNAPSHOT_KEEP,
  SNAPSHOT_TOP_ITEMS,
  VIEWS_PER_BOARD,
  WINDOWS_PER_BOARD,
} from '../core/ranking.limits';
import { AGGREGATES, type Aggregate } from '../core/aggregate';
import { VIEW_MODES } from '../core/trending-math';
import { TiesMode, TiesProperty } from '../options/ties/ties.option';
import { ActorsProperty, ActorsSetting } from '../options/actors/actors.option';
import { SegmentsDto, SegmentsProperty } from '../options/segments/segments.option';
import { GroupOfProperty, GroupOfSetting } from '../options/group-of/group-of.option';
import { OrderProperty, ScoreOrder } from '../options/order/order.option';
import { TiebreakProperty, TiebreakSetting } from '../options/tiebreak/tiebreak.option';
import { LeaguesProperty, LeaguesSetting } from '../options/leagues/leagues.option';
import { GroupsProperty } from '../options/groups/groups.option';
import { ModerationProperty, ModerationSettingsDto } from '../options/moderation/moderation.option';
import { MetricsProperty, ViewMetricProperty } from '../options/metrics/metrics.option';
import { TailProperty, TailSetting } from '../options/tail/tail.option';

/** An optional object of `type` (null refused), checked field by field; `notObject` answers anything else. */
const OptionalNested = (type: new () => object, description: string, notObject: string) =>
  applyDecorators(
    ApiPropertyOptional({ type, description }),
    IsOptionalNotNull(),
    IsObject({ message: notObject }),
    ValidateNested(),
    Type(() => type),
  );

const DURATION_SCHEMA = {
  oneOf: [
    { type: 'integer', minimum: DURATION_SEC.min, maximum: DURATION_SEC.max },
    { type: 'string', pattern: '^[1-9][0-9]*[smhd]?$' },
  ],
};

/** An optional duration of a view or window and its OpenAPI schema. */
const OptionalDurationProperty = (description: string, example: string) =>
  applyDecorators(ApiPropertyOptional({ description, example, ...DURATION_SCHEMA }), IsOptionalNotNull(), IsDuration());

export class SnapshotsDto {
  @ApiProperty({
    type: 'integer',
    minimum: SNAPSHOT_KEEP.min,
    maximum: SNAPSHOT_KEEP.max,
    description: 'Slot boundaries of history kept (each snapshot lives keep intervals)',
  })
  @IsInt()
  @Min(SNAPSHOT_KEEP.min)
  @Max(SNAPSHOT_KEEP.max)
  keep!: number;

  @ApiProperty({
    type: 'integer',
    minimum: SNAPSHOT_TOP_ITEMS.min,
    maximum: SNAPSHOT_TOP_ITEMS.max,
    description: 'Rows of the listing each snapshot stores',
  })
  @IsInt()
  @Min(SNAPSHOT_TOP_ITEMS.min)
  @Max(SNAPSHOT_TOP_ITEMS.max)
  top!: number;
}

export class ArchiveDto {
  @ApiProperty({
    type: 'integer',
    minimum: ARCHIVE_KEEP.min,
    maximum: ARCHIVE_KEEP.max,
    description: 'Closed periods kept (the oldest goes when a new one is kept)',
  })
  @IsInt()
  @Min(ARCHIVE_KEEP.min)
  @Max(ARCHIVE_KEEP.max)
  keep!: number;

  @ApiProperty({
    type: 'integer',
    minimum: ARCHIVE_TOP_ITEMS.min,
    maximum: ARCHIVE_TOP_ITEMS.max,
    description: "Rows of each period's final standings kept",
  })
  @IsInt()
  @Min(ARCHIVE_TOP_ITEMS.min)
  @Max(ARCHIVE_TOP_ITEMS.max)
  top!: number;
}

export class WindowDto {
  @OptionalNameProperty('Window name (defaults to the period as given, e.g. "24h")', '24h')
  name?: string;

  @OptionalDurationProperty(
    'Rolling windows: how much history the window covers: seconds, or 30s, 5m, 1h, 7d (not with calendar)',
    '24h',
  )
  period?: string | number;

  @OptionalDurationProperty(
    `Rolling windows: slot length; the period must be a multiple of it (at most ${MAX_SLOTS_PER_WINDOW} slots)`,
    '1h',
  )
  interval?: string | number;

  @ApiPropertyOptional({
    enum: CALENDARS,
    description: 'A calendar window instead of a rolling one: counts the current period of its time zone',
  })
  @IsOptionalNotNull()
  @IsIn(CALENDARS, { message: `$property must be one of ${CALENDARS.join(', ')}` })
  calendar?: Calendar;

  @ApiPropertyOptional({ description: 'Calendar windows: an IANA time zone (default UTC)', example: 'Europe/Berlin' })
  @IsOptionalNotNull()
  @IsString()
  @MaxLength(64)
  timeZone?: string;

  @ApiPropertyOptional({ enum: WEEK_STARTS, description: 'Calendar "week" windows only (default monday)' })
  @IsOptionalNotNull()
  @IsIn(WEEK_STARTS, { message: `$property must be one of ${WEEK_STARTS.join(', ')}` })
  weekStart?: WeekStart;

  @ApiPropertyOptional({
    description:
      'An all-time window: keeps every event for good (one slot, no expiry; reads answer from/to null). Takes a name only; the board needs maxItems',
  })
  @IsOptionalNotNull()
  @IsBoolean({ message: '$property must be true or false' })
  allTime?: boolean;

  @OptionalNested(
    ArchiveDto,
    "Calendar windows: keep each closed period's final standings (GET /boards/:board/archive)",
    'archive must be an object like { "keep": 12, "top": 100 }',
  )
  archive?: ArchiveDto;

  @OptionalNested(
    SnapshotsDto,
    "Keep the window's top rows at each slot boundary (GET /boards/:board/history, previousRank)",
    'snapshots must be an object like { "keep": 24, "top": 100 }',
  )
  snapshots?: SnapshotsDto;
}

export class ViewDto {
  @NameProperty('View name (read with ?window=<name>); not a window name', 'trending')
  name!: string;

  @ApiProperty({
    enum: VIEW_MODES,
    description:
      'decay, hot, rising, unique, or on a board with metrics wilson or controversial (see docs/trending.md)',
  })
  @IsIn(VIEW_MODES, { message: `$property must be one of ${VIEW_MODES.join(', ')}` })
  mode!: string;

  @NameProperty('The window the view reads (rising: the short window)', '1h')
  window!: string;

  @OptionalDurationProperty(
    `decay only, required: the half-life; the window may span at most ${DECAY_MAX_HALF_LIVES_PER_WINDOW} half-lives`,
    '30m',
  )
  halfLife?: string | number;

  @OptionalDurationProperty(`hot only: τ, the age worth a factor 10 of score (default ${DEFAULT_HOT_TAU_SEC} s)`, '12h')
  tau?: string | number;

  @OptionalNameProperty("rising only, required: the baseline window, longer than the view's window", '24h')
  baseline?: string;

  @OptionalIntProperty(RISING_MIN_COUNT, {
    description: 'rising only: least observed count of a listed item',
    default: DEFAULT_RISING_MIN_COUNT,
  })
  minCount?: number;

  @ViewMetricProperty('positive')
  positive?: string;

  @ViewMetricProperty('negative')
  negative?: string;
}

/** A board's views: the type first, then their count, then each view. */
const Views = () =>
  applyDecorators(
    ApiPropertyOptional({
      type: [ViewDto],
      maxItems: VIEWS_PER_BOARD.max,
      description: 'Trending views beside the windows. Omitted: the stored views are kept; [] removes them',
    }),
    IsOptionalNotNull(),
    IsArray(),
    ArrayMaxSize(VIEWS_PER_BOARD.max),
    IsObject({ each: true, message: '$property must hold objects like { "name": "...", "mode": "..." }' }),
    ValidateNested({ each: true }),
    Type(() => ViewDto),
  );

/** A board's windows: the type first, then their count, then each window. */
const Windows = () =>
  applyDecorators(
    ApiProperty({
      type: [WindowDto],
      minItems: WINDOWS_PER_BOARD.min,
      maxItems: WINDOWS_PER_BOARD.max,
      description: 'The windows; the first is the default for reads',
    }),
    IsArray(),
    ArrayMinSize(WINDOWS_PER_BOARD.min),
    ArrayMaxSize(WINDOWS_PER_BOARD.max),
    ValidateNested({ each: true }),
    Type(() => WindowDto),
  );

export class PutBoardDto {
  // A group board (groupOf) declares none: its one window is its member board's.
  @ValidateIf((dto: PutBoardDto) => dto.groupOf === undefined || dto.windows !== undefined)
  @Windows()
  windows?: WindowDto[];

  @OptionalIntProperty(SHARDS_PER_BOARD, {
    description:
      'Key groups (each its own Redis Cluster hash tag) the items spread over by a hash of the item id. Omitted: 1 for a new board, the current count for an existing one. Changing it needs ?reset=true and drops the data',
  })
  shards?: number;

  @OptionalIntProperty(BOARD_MAX_ITEMS, {
    description:
      'Most items the board holds: a write that would add a new item beyond it is refused (409 BOARD_FULL); existing items keep counting. On a sharded board each shard holds at most ceil(maxItems / shards). Omitted: the current cap (none for a new board)',
  })
  maxItems?: number;

  @Views()
  views?: ViewDto[];

  @TiesProperty()
  ties?: TiesMode;

  @OrderProperty()
  order?: ScoreOrder;

  @TiebreakProperty()
  tiebreak?: TiebreakSetting;

  @LeaguesProperty()
  leagues?: LeaguesSetting;

  @ModerationProperty()
  moderation?: ModerationSettingsDto;

  @MetricsProperty()
  metrics?: string[];

  @TailProperty()
  tail?: TailSetting;

  @ApiPropertyOptional({
    enum: AGGREGATES,
    description:
      "How a window combines an item's events: sum of increments and likes (default), or the max / min / latest score recorded by POST .../score inside the window. Views need sum. Omitted: the current one (sum for a new board). Changing it needs ?reset=true and drops the data",
  })
  @IsOptionalNotNull()
  @IsIn(AGGREGATES, { message: `$property must be one of ${AGGREGATES.join(', ')}` })
  aggregate?: Aggregate;

  @SegmentsProperty()
  segments?: SegmentsDto;

  @ActorsProperty()
  actors?: ActorsSetting;

  @GroupsProperty()
  groups?: boolean;

  @GroupOfProperty()
  groupOf?: GroupOfSetting;
}

export class PutBoardQuery {
  @ApiPropertyOptional({
    description:
      "Drop the data of windows whose period or interval changes, or that are removed (every window's when the shards or the aggregate change)",
  })
  @IsOptionalNotNull()
  @ToBool()
  @IsBoolean({ message: 'reset must be true or false' })
  reset?: boolean;
}

@CompiledValidation({ board: NAME_FIELD })
export class BoardParams {
  @NameProperty('Board name', 'posts')
  board!: string;
}
