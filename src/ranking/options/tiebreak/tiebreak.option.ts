import { ApiPropertyOptional } from '@nestjs/swagger';
import { InvalidInputError } from '../../../common/errors';
import { TIEBREAK_BOUND, TIEBREAK_BOUNDS } from './tiebreak.limits';
import { OptionalCheckedProperty, OptionalIntProperty } from '../../../common/dto';
import { fieldSetting, type BoardOption, type BoardSettings, luaModulesIn } from '../board-option';

/** Which tiebreak wins between equal scores: the higher (desc) or the lower (asc). */
export const TIEBREAK_ORDERS = ['desc', 'asc'] as const;
export type TiebreakOrder = (typeof TIEBREAK_ORDERS)[number];

/** A board's `tiebreak` setting. */
export interface TiebreakSetting {
  order: TiebreakOrder;
}

/** The option's part of a board config. */
export interface TiebreakConfig {
  /** Records are (score, tiebreak) pairs ranked score first, then tiebreak by its order; absent: off. */
  tiebreak?: TiebreakSetting;
}

/** A mark's digits (tiebreak_lib.lua's TB.WIDTH). */
const MARK_WIDTH = 16;

/**
 * Cost units a tiebreak adds to each results place of a write: the pair's order (an HGET, a ZREM, a
 * ZADD and an HSET beside the results' ZADD), as `ties: first` keeps its strict order.
 */
export const TIEBREAK_WRITE_COST = 4;

/**
 * What a count of a tiebreak board weighs: one ZLEXCOUNT where a plain count is one ZCOUNT (the
 * worst-case rows measured about the same time per count); kept at `ties: first`'s weight, to be safe.
 */
export const LOOKUP_TIEBREAK_WEIGHT = 3;

/** Why a board may not take a tiebreak, or a write or read may not carry one (INVALID_INPUT, 400). */
export const TIEBREAK_MESSAGES = {
  needsBest: (board: string) =>
    `tiebreak orders recorded pairs: board "${board}" aggregates by sum; use aggregate max, min or last`,
};

/**
 * The order a board's marks are kept in (tiebreak_lib.lua): marks follow the board's order as scores
 * do, so on an `order: asc` board (`order` its score order) the better tiebreak has the smaller mark,
 * which is the other tiebreak order's; undefined on a board without a tiebreak.
 */
export function tiebreakMarkOrder(config: Readonly<TiebreakConfig & { order?: string }>): TiebreakOrder | undefined {
  const order = config.tiebreak?.order;
  if (order === undefined || config.order !== 'asc') return order;
  return order === 'desc' ? 'asc' : 'desc';
}

/** The mark of tiebreak `value` kept in `order` (tiebreakMarkOrder; tiebreak_lib.lua's): greater for the greater value under desc. */
export function tiebreakMark(order: TiebreakOrder, value: number): string {
  const shifted = order === 'desc' ? TIEBREAK_BOUND + value : TIEBREAK_BOUND - value;
  return shifted.toFixed(0).padStart(MARK_WIDTH, '0');
}

/**
 * The tiebreak a mark holds under `order`; undefined for no mark (''). On a `ties: first` board a row's
 * mark goes on with its tie mark and id (tiebreak_lib.lua): its first MARK_WIDTH digits are the tiebreak's.
 */
export function tiebreakOfMark(order: TiebreakOrder, mark: string | undefined): number | undefined {
  if (mark === undefined || mark === '') return undefined;
  const shifted = Number(mark.slice(0, MARK_WIDTH));
  return order === 'desc' ? shifted - TIEBREAK_BOUND : TIEBREAK_BOUND - shifted;
}

/**
 * Rows of a board, each with its pair's tiebreak (the first MARK_WIDTH digits of its mark in `marks`,
 * at the same index) where it is ranked on a board with a tiebreak, as live rows carry it; a row
 * without a mark (a snapshot stored before marks) carries none.
 */
export function withRowTiebreaks<Row extends { rank: number | null }>(
  config: Readonly<TiebreakConfig & { order?: string }>,
  rows: Row[],
  marks: ReadonlyArray<string | undefined>,
): Array<Row & { tiebreak?: number }> {
  const order = tiebreakMarkOrder(config);
  if (order === undefined) return rows;
  return rows.map((row, i) => {
    const tiebreak = row.rank === null ? undefined : tiebreakOfMark(order, marks[i]);
    return tiebreak === undefined ? row : { ...row, tiebreak };
  });
}

const TIEBREAK_MESSAGE = `tiebreak must be an object like { "order": "desc" } (order one of ${TIEBREAK_ORDERS.join(', ')})`;

function validTiebreak(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const fields = Object.keys(value);
  const order = (value as { order?: unknown }).order;
  return fields.length === 1 && fields[0] === 'order' && TIEBREAK_ORDERS.some((known) => known === order);
}

/** The board PUT's `tiebreak` field: its schema and validation. */
export const TiebreakProperty = () =>
  OptionalCheckedProperty('isTiebreakSetting', validTiebreak, () => TIEBREAK_MESSAGE, {
    type: 'object',
    properties: { order: { type: 'string', enum: [...TIEBREAK_ORDERS] } },
    required: ['order'],
    additionalProperties: false,
    description:
      'Competition boards (aggregate max, min or last): a record is the pair (score, tiebreak); score writes and batch entries carry "tiebreak" (an integer, default 0). max / min keep the best pair (score first, then the tiebreak: "desc" the higher, "asc" the lower wins, whatever the board order); ranks order rows by score in the board order, then tiebreak, then the ties rule (shared: equal pairs share a rank; first: the record that reached its pair first ranks higher). Omitted: the current setting (none for a new board); turning it on, changing it, or changing the board order while it is on needs ?reset=true and drops the data',
  });

/** The board view's `tiebreak` field (present when the board keeps pairs). */
export const TiebreakViewProperty = () =>
  ApiPropertyOptional({
    type: 'object',
    properties: { order: { type: 'string', enum: [...TIEBREAK_ORDERS] } },
    description: 'Records are (score, tiebreak) pairs; absent: scores alone',
  });

/** A score write's or batch entry's `tiebreak` (the compiled check: TIEBREAK_FIELD). */
export const TiebreakWriteProperty = () =>
  OptionalIntProperty(TIEBREAK_BOUNDS, {
    description:
      "On a board with a tiebreak: the record is the pair (score, tiebreak), ranked score first, then tiebreak by the board's tiebreak order (default 0); elsewhere a 400",
  });

export const TIEBREAK_FIELD = { kind: 'int', range: TIEBREAK_BOUNDS } as const;

/** A row's or a write's window `tiebreak` (a board with a tiebreak). */
export const TiebreakRowProperty = () =>
  ApiPropertyOptional({
    type: 'integer',
    description: "On a board with a tiebreak: the tiebreak of the item's pair, beside its score",
  });

const kept = (config: Readonly<TiebreakConfig>) => config.tiebreak !== undefined;

function checkBoard(board: BoardSettings): void {
  if (board.options.tiebreak === undefined) return;
  if (board.aggregate === 'sum') throw new InvalidInputError(TIEBREAK_MESSAGES.needsBest(board.name));
}

/** `tiebreak`: tiebreak_lib.lua keeps each window's pairs in order beside its results. */
export const tiebreakOption: BoardOption<TiebreakConfig> = {
  ...fieldSetting<TiebreakConfig>('tiebreak', { put: TiebreakProperty, view: TiebreakViewProperty }),
  luaModules: luaModulesIn(__dirname, 'tiebreak_lib.lua'),
  fromStored: (fields) =>
    fields.tiebreak === 'asc' || fields.tiebreak === 'desc' ? { tiebreak: { order: fields.tiebreak } } : {},
  fromReply: (fields) => {
    if (fields.tiebreak === undefined || fields.tiebreak === null) return {};
    if (!validTiebreak(fields.tiebreak))
      throw new Error(`tiebreak ${JSON.stringify(fields.tiebreak)}: ${TIEBREAK_MESSAGE}`);
    return { tiebreak: { order: (fields.tiebreak as TiebreakSetting).order } };
  },
  view: (config) => (config.tiebreak ? { tiebreak: { order: config.tiebreak.order } } : {}),
  writeCostPerPlace: (config) => (kept(config) ? TIEBREAK_WRITE_COST : 0),
  // Beside ties first its pair order holds the strict one (ties' own order is not kept): a write costs
  // this option's units and ties' (an overestimate: the strict order adds a mark's draw, not an order).
  countWeight: (config) => (kept(config) ? LOOKUP_TIEBREAK_WEIGHT : 1),
  countWeightDoc: `x${LOOKUP_TIEBREAK_WEIGHT} on a board with a tiebreak`,
  check: checkBoard,
};
