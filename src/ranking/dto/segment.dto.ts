import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray } from 'class-validator';
import { FieldRule, NAME_FIELD, optional } from '../../common/compiled-checks';
import { IsName, IsOptionalNotNull, NextCursorProperty, OptionalNameProperty } from '../../common/dto';
import { SEGMENTS_PER_EVENT } from '../options/segments/segments.limits';

/** An event's optional segments (a board with `segments` only). */
export const SegmentsProperty = () =>
  applyDecorators(
    ApiPropertyOptional({
      type: [String],
      minItems: SEGMENTS_PER_EVENT.min,
      maxItems: SEGMENTS_PER_EVENT.max,
      description:
        'Segments (language, region, feed...) the event also counts in, each a name; on a board without `segments` a 400. A new segment beyond segments.max is a 409 SEGMENT_LIMIT',
      example: ['en', 'us'],
    }),
    IsOptionalNotNull(),
    IsArray(),
    ArrayMinSize(SEGMENTS_PER_EVENT.min),
    ArrayMaxSize(SEGMENTS_PER_EVENT.max),
    IsName({ each: true }),
  );

export const SEGMENTS_FIELD: FieldRule = optional({ kind: 'list', entries: SEGMENTS_PER_EVENT, item: NAME_FIELD });

export class SegmentRowDto {
  @ApiProperty({ example: 'en' }) name!: string;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'The most items one of its windows lists over the whole board (0: all its live scores are <= 0)',
  })
  items!: number;
}

export class SegmentListDto {
  @ApiProperty() board!: string;
  @ApiProperty({ type: [SegmentRowDto], description: 'Segments holding live data, in byte order of name' })
  segments!: SegmentRowDto[];
  @NextCursorProperty()
  nextCursor!: string | null;
}

/** `?segment=`: the reads of a board with segments answer as that segment's. */
export const SegmentQueryProperty = () =>
  OptionalNameProperty(
    'Segment: answer as a board that received only the events naming it (a segment holding nothing lists nothing)',
    'en',
  );
