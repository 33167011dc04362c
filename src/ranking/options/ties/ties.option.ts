import { modeProperties } from '../../../common/dto';
import { fieldSetting, modeOf, type BoardOption, luaModulesIn } from '../board-option';

/** How equal scores rank: shared competition ranks, or strict ranks with the earlier score first. */
export const TIES_MODES = ['shared', 'first'] as const;
export type TiesMode = (typeof TIES_MODES)[number];

/** The option's part of a board config. */
export interface TiesConfig {
  /** Equal scores: one competition rank (shared, also when absent), or strict ranks in the order items reached their score (first). */
  ties?: TiesMode;
}

/**
 * What a count of a `ties: first` board weighs (its counts also order tie marks): measured about 3x
 * the Redis time of a plain one (bench/fanout-reads.ts).
 */
export const LOOKUP_TIES_FIRST_WEIGHT = 3;

/** Cost units the strict order adds to each results place of a write (bench/write-cost.ts). */
export const TIES_FIRST_WRITE_COST = 4;

/**
 * The board PUT's `ties` field: its schema and validation (applied bottom-up, as stacked decorators are),
 * and the board view's (present when strict).
 */
export const { put: TiesProperty, view: TiesViewProperty } = modeProperties(
  TIES_MODES,
  'Equal scores: "shared" (competition ranks 1, 2, 2, 4) or "first" (strict ranks: among equal scores the item that reached its score first ranks higher, also across the shards of a sharded board). Omitted: the current mode (shared for a new board). Changing it needs ?reset=true and drops the data',
  ['first'],
  'Strict ranks among equal scores; absent: shared ranks',
);

const strict = (config: Readonly<TiesConfig>) => config.ties === 'first';

/** `ties: first`: strict ranks, kept by ties_lib.lua's order beside each window's results. */
export const tiesOption: BoardOption<TiesConfig> = {
  ...fieldSetting<TiesConfig>('ties', { put: TiesProperty, view: TiesViewProperty }),
  luaModules: luaModulesIn(__dirname, 'ties_lib.lua'),
  fromStored: (fields) => ({ ties: fields.ties === 'first' ? 'first' : 'shared' }),
  fromReply: (fields) => ({ ties: modeOf('ties', TIES_MODES, fields.ties) }),
  view: (config) => (strict(config) ? { ties: 'first' } : {}),
  writeCostPerPlace: (config) => (strict(config) ? TIES_FIRST_WRITE_COST : 0),
  costliest: { ties: 'first' },
  // Beside a tiebreak its counts are the tiebreak's (one ZLEXCOUNT or ZREVRANK on the pair order), weighed there.
  countWeight: (config: Readonly<TiesConfig & { tiebreak?: object }>) =>
    strict(config) && config.tiebreak === undefined ? LOOKUP_TIES_FIRST_WEIGHT : 1,
  countWeightDoc: `x${LOOKUP_TIES_FIRST_WEIGHT} on a ties: first board`,
  strictRanks: strict,
};
