import { Type } from 'class-transformer';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsObject, ValidateNested } from 'class-validator';
import { IsId, IsOptionalNotNull, OptionalIntProperty, OptionalNameProperty } from '../../common/dto';
import { ID_LENGTH_CHARS, PAGE_LIMIT_ITEMS, PAGE_OFFSET_ITEMS } from '../../common/limits';
import { ID_RULE } from '../../common/names';
import { MIN_ACTORS } from '../core/ranking.limits';
import { SpanProperty } from '../dto/item.dto';
import {
  EXCLUDE_GROUPS_MAX,
  EXCLUDE_ITEMS_MAX,
  FILTERED_DEPTH_ITEMS,
  PER_GROUP_ITEMS,
} from '../options/groups/groups.limits';
import { MetricProperty } from '../options/metrics/metrics.option';

const idsMessage = `must be ${ID_LENGTH_CHARS.min}-${ID_LENGTH_CHARS.max} printable characters`;

export class QueryExcludeDto {
  @ApiPropertyOptional({ type: [String], maxItems: EXCLUDE_ITEMS_MAX, description: `Item ids (${ID_RULE}) left out` })
  @IsOptionalNotNull()
  @IsArray({ message: 'exclude.items must be an array of ids' })
  @ArrayMaxSize(EXCLUDE_ITEMS_MAX)
  @IsId({ each: true, message: `each of exclude.items ${idsMessage}` })
  items?: string[];

  @ApiPropertyOptional({
    type: [String],
    maxItems: EXCLUDE_GROUPS_MAX,
    description: 'Group ids whose items are left out (a board with "groups": true)',
  })
  @IsOptionalNotNull()
  @IsArray({ message: 'exclude.groups must be an array of ids' })
  @ArrayMaxSize(EXCLUDE_GROUPS_MAX)
  @IsId({ each: true, message: `each of exclude.groups ${idsMessage}` })
  groups?: string[];
}

export class QueryDto {
  @OptionalNameProperty(
    "Window name (default: the board's first window), or a view's: its rows and view ranks, filtered alike (span on a view: 400)",
    '24h',
  )
  window?: string;

  @OptionalNameProperty("Read the window as this segment's", 'en')
  segment?: string;

  @SpanProperty() span?: string;

  @OptionalIntProperty(PAGE_LIMIT_ITEMS, {
    default: 100,
    description: `Rows (offset + limit at most ${FILTERED_DEPTH_ITEMS})`,
  })
  limit?: number;

  @OptionalIntProperty(PAGE_OFFSET_ITEMS, { description: 'Rows of the filtered listing skipped' })
  offset?: number;

  @OptionalIntProperty(PER_GROUP_ITEMS, { description: 'At most this many rows of one group' })
  perGroup?: number;

  @OptionalIntProperty(MIN_ACTORS, {
    description:
      'Only items with at least this many distinct actors in the window (a view: its window; a board with "actors")',
  })
  minActors?: number;

  @MetricProperty('The counter the window ranks by; rows carry every metric in `metrics`') metric?: string;

  @ApiPropertyOptional({ type: QueryExcludeDto })
  @IsOptionalNotNull()
  @IsObject({ message: 'exclude must be an object like { "items": [...], "groups": [...] }' })
  @ValidateNested()
  @Type(() => QueryExcludeDto)
  exclude?: QueryExcludeDto;
}
