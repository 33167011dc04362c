import { ApiPropertyOptional } from '@nestjs/swagger';
import { join } from 'node:path';
import { OptionalEnumProperty } from '../../../common/dto';
import { InvalidInputError } from '../../../common/errors';
import type { BoardOption } from '../board-option';
import { type Aggregate, AGGREGATES } from './aggregate';
import { AGGREGATE_MESSAGES as M, AGGREGATE_SCORE_WRITE_COST, MAX_AGGREGATE_SLOTS } from './aggregate.limits';

/** The option's part of a board config. */
export interface AggregateConfig {
  /** How a window combines an item's events: sum (also when absent), or the max / min / last score recorded. */
  aggregate?: Aggregate;
}

/** The board PUT's `aggregate` field: its schema and validation (applied bottom-up, as stacked decorators are). */
export const AggregateProperty = () =>
  OptionalEnumProperty(
    AGGREGATES,
    "How a window combines an item's events: sum of increments and likes (default), or the max / min / latest score recorded by POST .../score inside the window. Views need sum. Omitted: the current one (sum for a new board). Changing it needs ?reset=true and drops the data",
  );

/** The board view's `aggregate` field (present when not sum). */
export const AggregateViewProperty = () =>
  ApiPropertyOptional({ enum: AGGREGATES, description: 'Present when not sum' });

/** A window as the aggregate's checks read it. */
interface SlottedWindow {
  name: string;
  periodSec: number;
  intervalSec: number;
  calendar?: object;
}

/** The first rolling window of more than MAX_AGGREGATE_SLOTS slots, which a max / min / last board refuses. */
export function wideWindow(windows: readonly SlottedWindow[]): SlottedWindow | undefined {
  return windows.find((w) => !w.calendar && w.periodSec / w.intervalSec > MAX_AGGREGATE_SLOTS);
}

/**
 * Decay, hot and rising weigh sums of events: a max / min / last board takes none (segments and actors
 * refuse it themselves). Its rolling windows hold at most MAX_AGGREGATE_SLOTS slots: expiry
 * recomputes an item from every live slot. The board's settings as it will hold them.
 */
export function checkAggregate(board: {
  name: string;
  aggregate: Aggregate;
  hasViews: boolean;
  windows: readonly SlottedWindow[];
}): void {
  const { name, aggregate } = board;
  if (aggregate === 'sum') return;
  if (board.hasViews) throw new InvalidInputError(M.viewsNeedSum(name, aggregate));
  const wide = wideWindow(board.windows);
  if (wide) throw new InvalidInputError(M.aggregateTooManySlots(name, aggregate, wide.name, MAX_AGGREGATE_SLOTS));
}

/**
 * `aggregate: max | min | last`: windows keep the best (or latest) score recorded, aggregate_lib.lua's
 * slots and recomputation. Its field is one of the board's own, not passed on as an option's (`fields`
 * empty; its fromStored, fromReply and view answer nothing): board_put and shard_sync take it as an
 * argument, aggregate_lib adds it to the config fields every call reads with the version
 * (`aggregate.mode()`) and answers the core's hooks `slots_kept` (expiry) and `any_sign` (listing), and
 * the board's view shows it beside maxItems.
 */
export const aggregateOption: BoardOption<AggregateConfig> = {
  name: 'aggregate',
  fields: [],
  luaModules: [join(__dirname, 'aggregate_lib.lua')],
  fromStored: () => ({}),
  fromReply: () => ({}),
  view: () => ({}),
  writeCostPerPlace: (config) =>
    config.aggregate === undefined || config.aggregate === 'sum' ? 0 : AGGREGATE_SCORE_WRITE_COST[config.aggregate],
  // The costliest aggregate is each write-cost's own (COSTLIEST_ENTRY weighs every one).
};
