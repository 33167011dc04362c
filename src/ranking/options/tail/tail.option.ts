import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { settingProperties } from '../../../common/dto';
import { InvalidInputError } from '../../../common/errors';
import type { Bounds } from '../../../common/limits';
import { fieldSetting, type BoardOption, type BoardSettings, luaModulesIn } from '../board-option';

/** Rows of each window guaranteed exact (K): never pruned while among the best K. */
export const TAIL_EXACT_ROWS: Bounds = { min: 1, max: 1000 };
/** Counts in a closed slot below which an item may leave it (T): 2 drops the items seen once there. */
export const TAIL_BELOW_COUNT: Bounds = { min: 2, max: 1000 };

/**
 * Slots of a tail board's rolling window: a read call bounds each of its rows over every pruned slot
 * (a filter look until cached, then the row's cached list of slots), so its work grows with rows ×
 * slots: at 60 slots of items seen in every slot, a call of 256 rows ~13 M instructions
 * (bench/tail-slots-instructions.ts).
 */
export const MAX_TAIL_SLOTS = 64;

/**
 * Filter bits (GETBIT) one tail read call may look at, per expired-slot field of the read's budget
 * (EXPIRE_CHUNK): 1.5 × 100 by default. A look costs a Redis command and the row's SHA-1 (with the row's
 * share of the part, about 50 000 instructions), so a call answering a part of the page (256 rows at
 * most, tail_read_lib's ROWS_PER_CALL) stays near 8 M instructions, 3 ms (bench/tail-page-instructions.ts).
 * A row's bound costs a look at each pruned slot's filter until cached (docs/scaling.md).
 */
export const TAIL_LOOKS_PER_EXPIRE_FIELD = 1.5;
/**
 * The expiry budget (fields) of a tail read's calls after its first: the first call expires and prunes
 * within EXPIRE_CHUNK and keeps the page; the calls answering its parts spend their work on the rows'
 * looks, so a call pays for its pruning share or for its looks, not both (about 7.5 M instructions each).
 */
export const TAIL_PART_EXPIRE_FIELDS = 1;
/**
 * Calls of one shard's tail read that look at filter bits: the deepest page (2 064 rows) is 15 calls (its
 * first keeps the page, then parts of about 140 rows), and about half as many more stop where their bits
 * ran out. The calls after answer the rest of the page without looks (the cached bound, else H). A window
 * of many pruned slots answers fewer rows a call (tail_read_lib's rows_per_call: 31 over 64 slots), so
 * fewer of its rows get looks in one read: their bounds stay true, looser until a later read learns them.
 */
export const TAIL_CALLS_PER_READ = 24;

/** The option's setting: the exact head K and the admission count T of a closed slot. */
export interface TailSetting {
  exact: number;
  below: number;
}

/** The option's part of a board config. */
export interface TailConfig {
  /** Keeps each window's best `exact` rows exact and drops closed slots' counts below `below`; absent: off. */
  tail?: TailSetting;
}

export const TAIL_MESSAGES = {
  notObject: 'tail must be an object like { "exact": 1000, "below": 2 }',
  alone: (board: string) =>
    `tail prunes counts that views, segments and actors also keep: board "${board}" declares some; drop them or the tail`,
  tooManySlots: (board: string, window: string, max: number) =>
    `windows.${window}: board "${board}" has a tail, whose rolling windows hold at most ${max} slots (period / interval): a read bounds each row over every closed slot; use a longer interval`,
  needsSum: (board: string) =>
    `tail bounds the dropped part of sums: board "${board}" aggregates by max, min or last; use aggregate sum`,
};

export class TailDto {
  @ApiProperty({
    type: 'integer',
    minimum: TAIL_EXACT_ROWS.min,
    maximum: TAIL_EXACT_ROWS.max,
    description: "Rows of each window's best never pruned while among them (the head answered with bound 0)",
  })
  @IsInt()
  @Min(TAIL_EXACT_ROWS.min)
  @Max(TAIL_EXACT_ROWS.max)
  exact!: number;

  @ApiProperty({
    type: 'integer',
    minimum: TAIL_BELOW_COUNT.min,
    maximum: TAIL_BELOW_COUNT.max,
    description: 'A closed slot drops the items counting less than this there (2: those seen once)',
  })
  @IsInt()
  @Min(TAIL_BELOW_COUNT.min)
  @Max(TAIL_BELOW_COUNT.max)
  below!: number;
}

/** The board PUT's `tail` field: its schema and validation, and the board view's (present when on). */
export const { put: TailProperty, view: TailViewProperty } = settingProperties(
  TailDto,
  TAIL_MESSAGES.notObject,
  `The long tail in bounded memory (sum boards; rolling windows of at most ${MAX_TAIL_SLOTS} slots): ` +
    "once a slot of a rolling window closes, items counting less than `below` there leave it, outside the window's best `exact`; rows carry `bound`, 0 for exact rows (docs/scaling.md). Omitted: the current setting (off for a new board). Changing it needs ?reset=true and drops the data",
  'The bounded tail; absent: every count is kept',
);

/** A row's `bound` on a `tail` board (GET …/top). */
export const TailBoundProperty = () =>
  ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    description:
      'tail boards: the most the true count may exceed score; 0 exactly when score and rank are exact (docs/scaling.md)',
  });

const intOf = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) ? value : undefined;

/** `tail`: tail_lib.lua prunes closed slots into a per-slot bound and filter, tail_pack_lib.lua packs what they keep; reads certify the head. */
export const tailOption: BoardOption<TailConfig> = {
  ...fieldSetting<TailConfig>('tail', { put: TailProperty, view: TailViewProperty }),
  luaModules: luaModulesIn(__dirname, 'tail_lib.lua', 'tail_pack_lib.lua', 'tail_read_lib.lua'),
  fromStored: (fields) =>
    fields.tailExact === undefined
      ? {}
      : { tail: { exact: Number(fields.tailExact), below: Number(fields.tailBelow) } },
  fromReply: (fields) => {
    if (fields.tail === undefined || fields.tail === null) return {};
    const held = fields.tail as Record<string, unknown>;
    const [exact, below] = [intOf(held.exact), intOf(held.below)];
    if (exact === undefined || below === undefined)
      throw new Error(`tail ${JSON.stringify(fields.tail)} is not a setting`);
    return { tail: { exact, below } };
  },
  view: (config) => (config.tail === undefined ? {} : { tail: { exact: config.tail.exact, below: config.tail.below } }),
  check: (board: BoardSettings) => {
    if (board.options.tail === undefined) return;
    if (board.aggregate !== 'sum') throw new InvalidInputError(TAIL_MESSAGES.needsSum(board.name));
    const wide = board.windows?.find((w) => !w.calendar && w.periodSec / w.intervalSec > MAX_TAIL_SLOTS);
    if (wide) throw new InvalidInputError(TAIL_MESSAGES.tooManySlots(board.name, wide.name, MAX_TAIL_SLOTS));
    const holds = board.holds;
    if (holds && (holds.views || holds.segments || holds.actors))
      throw new InvalidInputError(TAIL_MESSAGES.alone(board.name));
  },
};
