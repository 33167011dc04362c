import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { InvalidInputError } from '../../../common/errors';
import { settingProperties } from '../../../common/dto';
import { settingFields, type BoardOption, luaModulesIn } from '../board-option';
import { SEGMENTS_MAX } from './segments.limits';

/** The option's part of a board config. */
export interface SegmentsConfig {
  /** Most live segments per shard; absent: the board takes no segments. */
  segmentsMax?: number;
}

/** What the board's view shows of it (the PUT's field). */
export interface SegmentsView {
  /** Present when the board takes segments. */
  segments?: { max: number };
}

/** The option's field of the board PUT body. */
export interface SegmentsPut {
  segments?: SegmentsDto;
}

/** Its messages: the board PUTs, writes and reads it refuses. */
export const SEGMENTS_MESSAGES = {
  notObject: 'segments must be an object like { "max": 100 }',
  needSum: (board: string, aggregate: string) =>
    `segments are kept for sum boards only: board "${board}" would both take segments and aggregate by ${aggregate}; use aggregate sum, or a board without segments`,
  allTime: (board: string, window: string) =>
    `board "${board}": the all-time window "${window}" keeps its events for good; its segments would then grow without end (use a rolling or calendar window for them)`,
  boardSegmentLimit: (live: number, max: number, wanted: number) =>
    `segment limit: the board holds ${live} live segments (over all its shards) of its segments.max ${max} and the event names ${wanted} new; the event was not applied`,
  segmentLimit: (live: number, max: number, wanted: number) =>
    `segment limit: the shard of this write holds ${live} live segments of its segments.max ${max} and the event names ${wanted} new; the event was not applied`,
  noSegments: (board: string, field: string) =>
    `${field}: board "${board}" takes no segments (declare "segments": { "max": n } in its config)`,
  segmentTwice: (field: string) => `${field} names a segment twice`,
  noSegmentRead: (board: string) =>
    `segment: board "${board}" takes no segments (declare "segments": { "max": n } in its config)`,
  segmentOffsetTooDeep: (board: string, offset: number, reached: number) =>
    `offset ${offset} of the segments of board "${board}" is past what one page reaches on its shards (${reached} names): page with cursor (each page's nextCursor) instead`,
};

export class SegmentsDto {
  @ApiProperty({
    type: 'integer',
    minimum: SEGMENTS_MAX.min,
    maximum: SEGMENTS_MAX.max,
    description:
      'Most segments holding live data at once on each shard: an event naming a new segment beyond it is refused (409 SEGMENT_LIMIT)',
  })
  @IsInt()
  @Min(SEGMENTS_MAX.min)
  @Max(SEGMENTS_MAX.max)
  max!: number;
}

/** The board PUT's `segments` field: its schema and validation, and the board view's. */
export const { put: SegmentsProperty, view: SegmentsViewProperty } = settingProperties(
  SegmentsDto,
  SEGMENTS_MESSAGES.notObject,
  'Lets events name segments (language, region, feed) that every read can then be restricted to (?segment=). Omitted: the current setting (none for a new board)',
  'Present when events may name segments',
);

/** A PUT's setting from its `segments` (absent: the stored one stays). */
export function segmentsOf(setting: SegmentsDto | undefined): SegmentsConfig {
  return { segmentsMax: setting?.max };
}

const declared = (config: Readonly<SegmentsConfig>) => config.segmentsMax !== undefined;

/**
 * `segments: { max }`: events name segments, sub-boards of a shard (segment_lib.lua). What an entry's
 * segments add to a write's cost goes with the entry (write-cost.ts), not with each place.
 */
export const segmentsOption: BoardOption<SegmentsConfig, SegmentsView, SegmentsPut> = {
  ...settingFields<SegmentsPut, SegmentsView>('segments', { put: SegmentsProperty, view: SegmentsViewProperty }),
  fromPut: (body) => segmentsOf(body.segments as SegmentsDto | undefined),
  name: 'segments',
  fields: ['segmentsMax'],
  luaModules: luaModulesIn(
    __dirname,
    'segment_lib.lua',
    'segment_index_lib.lua',
    'segment_growth_lib.lua',
    'segment_list_lib.lua',
  ),
  fromStored: (fields) => (fields.segmentsMax ? { segmentsMax: Number(fields.segmentsMax) } : {}),
  fromReply: (fields) => {
    const max = fields.segmentsMax ?? 0;
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 0)
      throw new Error(`segmentsMax ${JSON.stringify(fields.segmentsMax)} is not a count`);
    return max > 0 ? { segmentsMax: max } : {};
  },
  view: (config) => (declared(config) ? { segments: { max: config.segmentsMax! } } : {}),
  check: (board) => {
    if (((board.options.segmentsMax as number | undefined) ?? 0) <= 0) return;
    if (board.aggregate !== 'sum') throw new InvalidInputError(SEGMENTS_MESSAGES.needSum(board.name, board.aggregate));
    if (board.allTimeWindow !== undefined)
      throw new InvalidInputError(SEGMENTS_MESSAGES.allTime(board.name, board.allTimeWindow));
  },
};
