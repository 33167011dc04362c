import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { HiddenProperty } from './moderation.dto';
import { ListedRankProperty, TiebreakRowProperty } from './row-fields';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean } from 'class-validator';
import { IsId, IsOptionalNotNull, OptionalIntProperty, OptionalNameProperty } from '../../common/dto';
import { ID_LENGTH_CHARS, PAGE_LIMIT_ITEMS, PAGE_OFFSET_ITEMS } from '../../common/limits';
import { ID_RULE } from '../../common/names';
import { LOOKUP_ITEMS, MIN_ACTORS, RADIUS_ITEMS } from '../core/ranking.limits';
import {
  ITEM_DATA_FLAG_FIELD as DATA_FIELD,
  ITEM_DATA_SCHEMA as DATA_SCHEMA,
  ItemDataFlagProperty as DataFlag,
} from '../options/item-data/item-data.option';
import { CompiledValidation, FieldRules, optional } from '../../common/compiled-checks';
import { METRIC_FIELD, MetricCountsProperty, MetricProperty } from '../options/metrics/metrics.option';
import { AroundQuery, ItemQuery, SPAN_PATTERN, TopQuery, WINDOW_FIELD, WindowFiguresDto } from './item.dto';
import { SegmentQueryProperty } from './segment.dto';
import { FILTERED_DEPTH_ITEMS, PER_GROUP_ITEMS } from '../options/groups/groups.limits';

/** The fields every item read's query checks (compiled on the routes' query classes below). */
const ITEM_QUERY_FIELDS = {
  window: WINDOW_FIELD,
  span: optional({ kind: 'string', pattern: SPAN_PATTERN, length: { min: 1, max: 11 } }),
  segment: WINDOW_FIELD,
  metric: METRIC_FIELD,
} as const satisfies FieldRules;

const TOP_QUERY_FIELDS = {
  ...ITEM_QUERY_FIELDS,
  limit: optional({ kind: 'int', range: PAGE_LIMIT_ITEMS, fromQuery: true }),
  offset: optional({ kind: 'int', range: PAGE_OFFSET_ITEMS, fromQuery: true }),
} as const satisfies FieldRules;

const AROUND_QUERY_FIELDS = {
  ...ITEM_QUERY_FIELDS,
  radius: optional({ kind: 'int', range: RADIUS_ITEMS, fromQuery: true }),
} as const satisfies FieldRules;

/** `?perGroup=`: at most this many rows of one group (top and the stream). */
export const PerGroupProperty = () =>
  OptionalIntProperty(
    PER_GROUP_ITEMS,
    {
      description: `At most this many rows of one group (a board with "groups": true, else 400); rows keep their board rank (a view: its view rank); offset + limit at most ${FILTERED_DEPTH_ITEMS}; see truncated`,
    },
    { fromQuery: true },
  );

/** `?minActors=`: only items with at least this many distinct actors (top and the stream). */
export const MinActorsProperty = () =>
  OptionalIntProperty(
    MIN_ACTORS,
    {
      description: `Only items with at least this many distinct actors in the window (a view: in its window; a board with "actors", else 400); rows keep their board rank; offset + limit at most ${FILTERED_DEPTH_ITEMS}; see truncated`,
    },
    { fromQuery: true },
  );

/** The compiled checks of perGroup and minActors (top and the stream). */
export const FILTER_QUERY_FIELDS = {
  perGroup: optional({ kind: 'int', range: PER_GROUP_ITEMS, fromQuery: true }),
  minActors: optional({ kind: 'int', range: MIN_ACTORS, fromQuery: true }),
} as const satisfies FieldRules;

@CompiledValidation({ ...TOP_QUERY_FIELDS, data: DATA_FIELD, ...FILTER_QUERY_FIELDS })
export class TopDataQuery extends TopQuery {
  @DataFlag() data?: boolean;
  @PerGroupProperty() perGroup?: number;
  @MinActorsProperty() minActors?: number;
}

@CompiledValidation({ ...AROUND_QUERY_FIELDS, data: DATA_FIELD })
export class AroundDataQuery extends AroundQuery {
  @DataFlag() data?: boolean;
}

@CompiledValidation({ ...ITEM_QUERY_FIELDS, data: DATA_FIELD })
export class ItemDataQuery extends ItemQuery {
  @DataFlag() data?: boolean;
}

export class LookupQuery {
  @DataFlag() data?: boolean;

  @SegmentQueryProperty()
  segment?: string;

  @MetricProperty('The counter the ids are scored and ranked by; rows carry every metric in `metrics`')
  metric?: string;
}

export class LookupDto {
  @ApiProperty({
    type: [String],
    minItems: LOOKUP_ITEMS.min,
    maxItems: LOOKUP_ITEMS.max,
    description: `Item ids (${ID_RULE}), each at most once; answered in this order`,
    example: ['post-42', 'post-7'],
  })
  @IsArray({ message: 'items must be an array of ids' })
  @ArrayMinSize(LOOKUP_ITEMS.min)
  @ArrayMaxSize(LOOKUP_ITEMS.max)
  @IsId({
    each: true,
    message: `each of items must be ${ID_LENGTH_CHARS.min}-${ID_LENGTH_CHARS.max} printable characters`,
  })
  items!: string[];

  @OptionalNameProperty("Window name (default: the board's first window; views are not looked up)", '24h')
  window?: string;

  @ApiPropertyOptional({
    type: Boolean,
    default: false,
    description: 'true: `rank` is the competition rank among the ids given (a friends board), not the board rank',
  })
  @IsOptionalNotNull()
  @IsBoolean({ message: 'relative must be true or false' })
  relative?: boolean;
}

export class LookupRowDto {
  @ApiProperty() item!: string;
  @ApiProperty({ type: Number, description: "The item's score in the window; 0 when the window holds nothing of it" })
  score!: number;
  @TiebreakRowProperty() tiebreak?: number;
  @ListedRankProperty(
    'Board rank (competition ranks; strict on a `ties: first` board), or with `relative` the rank among the ids given',
  )
  rank!: number | null;
  @HiddenProperty() hidden?: true;
  @MetricCountsProperty() metrics?: Record<string, number>;
  @ApiProperty({
    nullable: true,
    type: 'integer',
    minimum: 1,
    description: "Board rank in the window's latest snapshot; null when absent from it or when the window keeps none",
  })
  previousRank!: number | null;
  @ApiPropertyOptional({ ...DATA_SCHEMA, nullable: true, description: 'With ?data=true: the item data (null: none)' })
  data?: object | null;
}

export class LookupResultDto extends WindowFiguresDto {
  @ApiProperty({ type: [LookupRowDto], description: 'One row per id, in the order given' })
  items!: LookupRowDto[];
}

/** The body of PUT /boards/:board/items/:item/data, for the OpenAPI document (any JSON object). */
export const ITEM_DATA_BODY = { schema: { ...DATA_SCHEMA, example: { name: 'Ada', country: 'FR' } } };
