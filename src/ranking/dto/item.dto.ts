import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsObject, Length, Matches, ValidateNested } from 'class-validator';
import { CompiledValidation, FieldRule, ID_FIELD, NAME_FIELD, optional } from '../../common/compiled-checks';
import {
  IdProperty,
  IsOptionalNotNull,
  NameProperty,
  OptionalIntProperty,
  OptionalNameProperty,
  OptionalUnixTimeProperty,
  PageLimit,
  PageOffset,
} from '../../common/dto';
import { MAX_FUTURE_SKEW_SEC, UNIX_SEC } from '../../common/limits';
import { TailBoundProperty } from '../options/tail/tail.option';
import {
  AMOUNT_RANGE,
  BATCH_ENTRIES,
  SCORE_RANGE,
  DEFAULT_AMOUNT,
  DEFAULT_RADIUS_ITEMS,
  DEFAULT_TOP_ITEMS,
  RADIUS_ITEMS,
} from '../core/ranking.limits';
import { SEGMENTS_FIELD, SegmentQueryProperty, SegmentsProperty } from './segment.dto';
import { ACTOR_FIELD, ActorProperty, withActor } from './actor.dto';
import { DataProperty, GROUP_FIELD, GroupProperty, RowGroupProperty, TruncatedProperty } from './row-fields';
import {
  ListedRankProperty,
  TIEBREAK_FIELD,
  TiebreakRowProperty,
  TiebreakWriteProperty,
  WindowScoreProperty,
} from './row-fields';
import { VIEW_MODES } from '../options/views/trending-math';
import {
  HistoryMetricCountsProperty,
  METRIC_FIELD,
  MetricCountsProperty,
  MetricProperty,
} from '../options/metrics/metrics.option';

/** Rank in the window's latest snapshot. */
const PreviousRankProperty = () =>
  ApiProperty({
    nullable: true,
    type: 'integer',
    minimum: 1,
    description: "Rank in the window's latest snapshot; null when absent from it or when the window keeps no snapshots",
  });

/** An increment's or batch entry's optional amount. */
const AmountProperty = () =>
  OptionalIntProperty(
    AMOUNT_RANGE,
    { description: 'Amount to add (negative subtracts)', default: DEFAULT_AMOUNT },
    { nonZero: true },
  );
const AMOUNT_FIELD: FieldRule = optional({ kind: 'int', range: AMOUNT_RANGE, nonZero: true });

/** An event's optional time. */
const AtProperty = () =>
  OptionalUnixTimeProperty(
    `The event's time, unix seconds (fractions allowed; default now): it lands in the slot of that time in every window and view whose live span still holds it. At most ${MAX_FUTURE_SKEW_SEC} s ahead (counted as now); older than every window's live span is a 400`,
  );
const AT_FIELD: FieldRule = optional({ kind: 'finite', range: UNIX_SEC });

/** An item's optional creation time (hot views). */
const CreatedAtProperty = () =>
  OptionalUnixTimeProperty(
    `When the item was created, unix seconds (fractions allowed): a hot view's firstSeen is the earliest of the item's event times and creation times. At most ${MAX_FUTURE_SKEW_SEC} s ahead`,
  );

/** A query's optional window name. */
const WindowProperty = () => OptionalNameProperty("Window or view name (default: the board's first window)", '24h');
export const WINDOW_FIELD = optional(NAME_FIELD);

@CompiledValidation({ board: NAME_FIELD, item: ID_FIELD })
export class ItemParams {
  @NameProperty('Board name', 'posts')
  board!: string;

  @IdProperty('Item id (URL-encoded)', 'post-42')
  item!: string;
}

@CompiledValidation({ board: NAME_FIELD, item: ID_FIELD, userId: ID_FIELD })
export class LikeParams extends ItemParams {
  @IdProperty('User id (URL-encoded)', 'user-7')
  userId!: string;
}

const EVENT = withActor({ amount: AMOUNT_FIELD, at: AT_FIELD, createdAt: AT_FIELD, segments: SEGMENTS_FIELD });
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a mixin's base takes any constructor arguments
type EventHead = new (...args: any[]) => object;

/** An event's own fields (`Head`'s), then those every event ends with: times, segments, actor, group, metric. */
function withEventTail<Head extends EventHead>(head: Head) {
  class EventDto extends head {
    @AtProperty() at?: number;
    @CreatedAtProperty() createdAt?: number;
    @SegmentsProperty() segments?: string[];
    @ActorProperty() actor?: string;
    @GroupProperty() group?: string;
    @MetricProperty('The counter the event adds to') metric?: string;
  }
  return EventDto;
}

class IncrementHead {
  @AmountProperty() amount?: number;
}

@CompiledValidation({ ...EVENT, group: GROUP_FIELD, metric: METRIC_FIELD })
export class IncrementDto extends withEventTail(IncrementHead) {}

class BatchEntryHead {
  @IdProperty('Item id', 'post-42') item!: string;
  @AmountProperty() amount?: number;
  @OptionalIntProperty(SCORE_RANGE, {
    description: 'On a max / min / last board, the score (instead of amount; see POST .../score); elsewhere 409',
  })
  score?: number;
  @TiebreakWriteProperty() tiebreak?: number;
}

export class BatchEntryDto extends withEventTail(BatchEntryHead) {}

/** The entries of a batch: the type first, then their count, then each entry. */
const BatchEntries = () =>
  applyDecorators(
    ApiProperty({ type: [BatchEntryDto], minItems: BATCH_ENTRIES.min, maxItems: BATCH_ENTRIES.max }),
    IsArray(),
    ArrayMinSize(BATCH_ENTRIES.min),
    ArrayMaxSize(BATCH_ENTRIES.max),
    // ValidateNested alone lets an array through where an entry belongs ([[]] wrote the id "").
    IsObject({ each: true, message: '$property must hold objects like { "item": "..." }' }),
    ValidateNested({ each: true }),
    Type(() => BatchEntryDto),
  );

@CompiledValidation({
  items: {
    kind: 'array',
    entries: BATCH_ENTRIES,
    entry: BatchEntryDto,
    fields: {
      item: ID_FIELD,
      amount: AMOUNT_FIELD,
      score: optional({ kind: 'int', range: SCORE_RANGE }),
      tiebreak: optional(TIEBREAK_FIELD),
      at: AT_FIELD,
      createdAt: AT_FIELD,
      segments: SEGMENTS_FIELD,
      actor: ACTOR_FIELD,
      group: GROUP_FIELD,
      metric: METRIC_FIELD,
    },
  },
})
export class BatchIncrementDto {
  @BatchEntries()
  items!: BatchEntryDto[];
}

@CompiledValidation({ userId: ID_FIELD, at: AT_FIELD, segments: SEGMENTS_FIELD })
export class LikeDto {
  @IdProperty('User id', 'user-7')
  userId!: string;

  @AtProperty()
  at?: number;

  @SegmentsProperty()
  segments?: string[];
}

/** The window a query reads (each route's query below compiles its own check). */
export class WindowQuery {
  @WindowProperty()
  window?: string;
}

/** `?span=`: a duration, checked against the window (a multiple of its interval, at most its period) by the read. */
export const SPAN_PATTERN = /^[1-9][0-9]{0,9}[smhd]?$/;
export const SpanProperty = () =>
  applyDecorators(
    ApiPropertyOptional({
      type: 'string',
      pattern: SPAN_PATTERN.source,
      minLength: 1,
      maxLength: 11,
      example: '6h',
      description:
        "Rolling windows only: count only the newest slots covering this span (seconds, or 30s, 5m, 1h, 7d; a multiple of the window's interval, at most its period). Exact; a span holding more slot fields than one read sums is a 422 SPAN_TOO_COSTLY",
    }),
    IsOptionalNotNull(),
    Matches(SPAN_PATTERN, { message: '$property must be a duration: seconds, or <n>s, <n>m, <n>h, <n>d' }),
    Length(1, 11),
  );

export class ItemQuery extends WindowQuery {
  @SpanProperty() span?: string;
  @SegmentQueryProperty() segment?: string;
  @MetricProperty('The counter a window ranks by') metric?: string;
}

export class TopQuery extends ItemQuery {
  @PageLimit(DEFAULT_TOP_ITEMS)
  limit?: number;

  @PageOffset()
  offset?: number;
}

export class AroundQuery extends ItemQuery {
  @OptionalIntProperty(
    RADIUS_ITEMS,
    { default: DEFAULT_RADIUS_ITEMS, description: 'Neighbours on each side' },
    { fromQuery: true },
  )
  radius?: number;
}

export class StandingDto {
  @WindowScoreProperty() score!: number;
  @ListedRankProperty('Competition rank (1, 2, 2, 4; lowest score first on an `order: asc` board)') rank!:
    number | null;
  @PreviousRankProperty() previousRank!: number | null;
  @TiebreakRowProperty() tiebreak?: number;
}

const WINDOWS_SCHEMA = {
  type: 'object',
  additionalProperties: { $ref: '#/components/schemas/StandingDto' },
  description: 'Per window name',
} as const;

export class IncrementResultDto {
  @ApiProperty() board!: string;
  @ApiProperty() item!: string;
  @ApiProperty(WINDOWS_SCHEMA) windows!: Record<string, StandingDto>;
  @ApiProperty({ description: 'True while expired data is left on its shard or on others counted as they stand' })
  draining!: boolean;
}

export class BatchResultDto {
  @ApiProperty() board!: string;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Entries applied' }) count!: number;
  @ApiProperty() draining!: boolean;
}

export class LikeResultDto extends IncrementResultDto {
  @ApiProperty() userId!: string;
  @ApiProperty({ description: 'Whether this call changed the counts' }) counted!: boolean;
}

const SCORE_NOTE =
  "A window's sum over its live slots (an integer); a view's score (decay: the decayed sum as of now; hot, rising: their formula's score)";

/** What a rising view's rows and items also answer. */
class RisingFiguresDto {
  @ApiPropertyOptional({ description: "rising: the item's sum in the view's window" }) observed?: number;
  @ApiPropertyOptional({
    description: "rising: the baseline's sum scaled to the window's period (floored at 1 when new)",
  })
  expected?: number;
  @ApiPropertyOptional({
    enum: ['new', 'rising', 'peaking', 'cooling'],
    description: 'rising: where the item is in its trend',
  })
  phase?: string;
  @ApiPropertyOptional({ type: 'integer', description: 'rising: when it entered the view (unix s)' }) since?: number;
}

/** A row of a listing: a live read's (RankedItemDto) or a kept snapshot's (ListedItemDto). */
export class ListedRowDto extends RisingFiguresDto {
  @ApiProperty({ type: 'integer', minimum: 1 }) rank!: number;
  @ApiProperty() item!: string;
  @ApiProperty({ type: Number, description: SCORE_NOTE }) score!: number;
  @TiebreakRowProperty() tiebreak?: number;
}

/** A history row (GET …/history). */
export class ListedItemDto extends ListedRowDto {
  @HistoryMetricCountsProperty() metrics?: Record<string, number>;
}

export class RankedItemDto extends ListedRowDto {
  @PreviousRankProperty() previousRank!: number | null;
  @DataProperty() data?: object | null;
  @RowGroupProperty() group?: string;
  @MetricCountsProperty() metrics?: Record<string, number>;
  @TailBoundProperty() bound?: number;
}

const SPAN_EDGE = { type: 'integer', nullable: true } as const;

export class WindowFiguresDto {
  @ApiProperty() board!: string;
  @ApiProperty() window!: string;
  @ApiProperty({ ...SPAN_EDGE, description: 'Oldest live slot or period start (unix s); all-time: null' })
  from!: number | null;
  @ApiProperty({ ...SPAN_EDGE, description: 'End of the current slot or period (unix s); all-time: null' })
  to!: number | null;
  @ApiPropertyOptional({ description: "A calendar window's IANA time zone (absent on rolling windows)" })
  timeZone?: string;
  @ApiProperty({ description: 'True while an expired slot larger than one chunk is still being subtracted' })
  draining!: boolean;
  @ApiPropertyOptional({ enum: VIEW_MODES, description: "A view's mode (absent when reading a window)" })
  mode?: string;
}

export class TopResultDto extends WindowFiguresDto {
  @ApiProperty({ type: [RankedItemDto], description: 'Highest score first; ties in descending byte order of item id' })
  items!: RankedItemDto[];
  @TruncatedProperty() truncated?: boolean;
}

export class AroundResultDto extends TopResultDto {
  @ApiProperty() item!: string;
}

export class ItemResultDto extends WindowFiguresDto {
  @ApiProperty() item!: string;
  @RowGroupProperty() group?: string;
  @MetricCountsProperty() metrics?: Record<string, number>;
  @ApiProperty({ type: Number, description: SCORE_NOTE }) score!: number;
  @TiebreakRowProperty() tiebreak?: number;
  @ApiPropertyOptional() observed?: number;
  @ApiPropertyOptional() expected?: number;
  @ApiPropertyOptional({ enum: ['new', 'rising', 'peaking', 'cooling'] }) phase?: string;
  @ApiPropertyOptional({ type: 'integer' }) since?: number;
  @ApiProperty({ nullable: true, type: 'integer', minimum: 1 }) rank!: number | null;
  @ApiProperty({
    nullable: true,
    type: Number,
    minimum: 0,
    maximum: 100,
    description: 'Share (%) of the other ranked items ranked after this one (strict order on a `ties: first` board)',
  })
  percentile!: number | null;
  @DataProperty() data?: object | null;
}

const UNIX_SEC_QUERY = optional({ kind: 'int', range: UNIX_SEC, fromQuery: true });

@CompiledValidation({ window: WINDOW_FIELD, at: UNIX_SEC_QUERY, segment: WINDOW_FIELD, metric: METRIC_FIELD })
export class HistoryQuery extends WindowQuery {
  @SegmentQueryProperty()
  segment?: string;
  @MetricProperty('The counter whose snapshot is read') metric?: string;
  @OptionalIntProperty(
    UNIX_SEC,
    { description: 'Unix s: the latest snapshot taken at or before it (default: the latest)' },
    { fromQuery: true },
  )
  at?: number;
}

@CompiledValidation({
  window: WINDOW_FIELD,
  from: UNIX_SEC_QUERY,
  to: UNIX_SEC_QUERY,
  segment: WINDOW_FIELD,
  metric: METRIC_FIELD,
})
export class ItemHistoryQuery extends WindowQuery {
  @SegmentQueryProperty()
  segment?: string;
  @MetricProperty('The counter whose snapshots are read') metric?: string;
  @OptionalIntProperty(
    UNIX_SEC,
    { description: 'Unix s: oldest snapshot boundary to answer (default: all kept)' },
    { fromQuery: true },
  )
  from?: number;

  @OptionalIntProperty(
    UNIX_SEC,
    { description: 'Unix s: newest snapshot boundary to answer (default: now)' },
    { fromQuery: true },
  )
  to?: number;
}

export class HistoryResultDto {
  @ApiProperty() board!: string;
  @ApiProperty() window!: string;
  @ApiProperty({ type: 'integer', description: 'The slot boundary the snapshot was taken at (unix s)' }) at!: number;
  @ApiProperty({ type: 'integer', description: 'Start of the span the snapshot covers: at - period (unix s)' })
  from!: number;
  @ApiProperty({ type: 'integer', description: 'End of the span the snapshot covers: at (unix s)' }) to!: number;
  @ApiProperty({ type: [ListedItemDto], description: "The window's top rows at the boundary, highest score first" })
  items!: ListedItemDto[];
}
