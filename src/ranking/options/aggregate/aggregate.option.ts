import { modeProperties } from '../../../common/dto';
import { InvalidInputError } from '../../../common/errors';
import { modulesOnly, settingFields, type BoardOption, type BoardSettings, luaModulesIn } from '../board-option';
import { type Aggregate, AGGREGATES } from './aggregate';
import { AGGREGATE_MESSAGES as M, AGGREGATE_SCORE_WRITE_COST, MAX_AGGREGATE_SLOTS } from './aggregate.limits';

/** The option's part of a board config. */
export interface AggregateConfig {
  /** How a window combines an item's events: sum (also when absent), or the max / min / last score recorded. */
  aggregate?: Aggregate;
}

/**
 * The board PUT's `aggregate` field: its schema and validation (applied bottom-up, as stacked decorators are),
 * and the board view's (present when not sum).
 */
export const { put: AggregateProperty, view: AggregateViewProperty } = modeProperties(
  AGGREGATES,
  "How a window combines an item's events: sum of increments and likes (default), or the max / min / latest score recorded by POST .../score inside the window. Views need sum. Omitted: the current one (sum for a new board). Changing it needs ?reset=true and drops the data",
  AGGREGATES,
  'Present when not sum',
);

/**
 * Decay, hot and rising weigh sums of events: a max / min / last board takes none (segments and actors
 * refuse it themselves). Its rolling windows hold at most MAX_AGGREGATE_SLOTS slots: expiry
 * recomputes an item from every live slot. The board's settings as it will hold them.
 */
export function checkAggregate(board: BoardSettings): void {
  const { name, aggregate } = board;
  if (aggregate === 'sum') return;
  if (board.holds?.views) throw new InvalidInputError(M.viewsNeedSum(name, aggregate));
  const wide = board.windows?.find((w) => !w.calendar && w.periodSec / w.intervalSec > MAX_AGGREGATE_SLOTS);
  if (wide) throw new InvalidInputError(M.aggregateTooManySlots(name, aggregate, wide.name, MAX_AGGREGATE_SLOTS));
}

/** What a board of `config` keeps instead of sums: its aggregate unless sum. */
const keptOf = (config: Readonly<AggregateConfig>): Exclude<Aggregate, 'sum'> | undefined =>
  config.aggregate === undefined || config.aggregate === 'sum' ? undefined : config.aggregate;

/**
 * `aggregate: max | min | last`: windows keep the best (or latest) score recorded, aggregate_lib.lua's
 * slots and recomputation. Its field is one of the board's own, not passed on as an option's (`fields`
 * empty; its fromStored and fromReply answer nothing): board_put and shard_sync take it as an
 * argument, and aggregate_lib adds it to the config fields every call reads with the version
 * (`aggregate.mode()`) and answers the core's hooks `slots_kept` (expiry) and `any_sign` (listing).
 * The slices ask it what a board keeps (keptScore) and which writes it takes (writeMismatch).
 */
export const aggregateOption: BoardOption<AggregateConfig> = {
  ...settingFields<AggregateConfig>('aggregate', { put: AggregateProperty, view: AggregateViewProperty }),
  ...modulesOnly('aggregate', luaModulesIn(__dirname, 'aggregate_lib.lua')),
  // Not among `fields`: the board PUT's store call passes the aggregate on its own.
  fromPut: (body) => ({ aggregate: body.aggregate as Aggregate | undefined }),
  view: (config) => {
    const kept = keptOf(config);
    return kept === undefined ? {} : { aggregate: kept };
  },
  writeCostPerPlace: (config) => {
    const kept = keptOf(config);
    return kept === undefined ? 0 : AGGREGATE_SCORE_WRITE_COST[kept];
  },
  // No aggregate is costliest alone: a sum board takes segments and actors, the others weigh a place more.
  costliestAmong: AGGREGATES.map((aggregate) => ({ aggregate })),
  keptScore: keptOf,
  writeMismatch: (config, board, { scores, write }) =>
    (keptOf(config) !== undefined) === scores
      ? undefined
      : M.aggregateMismatch(board, config.aggregate ?? 'sum', write),
  check: checkAggregate,
};
