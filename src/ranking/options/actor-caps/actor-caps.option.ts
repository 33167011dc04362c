import { ApiPropertyOptional } from '@nestjs/swagger';
import type { Bounds } from '../../../common/limits';
import { type BoardOption, luaModulesIn } from '../board-option';

/** Most one actor's events add to one item in a window (`actors: { capPerItem }`). */
export const CAP_PER_ITEM: Bounds = { min: 1, max: 1_000_000_000_000 };

/** An actor's weight (PUT /admin/boards/:board/actors/:actor): an integer, 1 for an actor never weighed. */
export const ACTOR_WEIGHT: Bounds = { min: 0, max: 100 };
export const DEFAULT_ACTOR_WEIGHT = 1;

/**
 * Cost units a cap adds to each results place of a write: an actor's place reads and moves its pair's
 * held sum (an HGET and an HINCRBY beside the contribution's WRITE_COST_WEIGHTS.actor 5), charged on
 * every place since the option does not see the entry's actor.
 */
export const ACTOR_CAP_WRITE_COST = 1;

/** The option's part of a board config. */
export interface ActorCapsConfig {
  /** Most one actor's events add to one item in a window; absent (or 0 in a PUT): no cap. */
  capPerItem?: number;
}

/** The board view's `capPerItem` field (present when the board caps actors). */
export const CapPerItemViewProperty = () =>
  ApiPropertyOptional({
    type: 'integer',
    minimum: CAP_PER_ITEM.min,
    description: 'Most one actor adds to one item in a window (`actors: { capPerItem }`); absent: no cap',
  });

/** A PUT's cap from its `actors` (0: none; undefined: `actors` omitted, the stored cap stays). */
export function capOf(setting: boolean | { capPerItem?: number } | undefined): ActorCapsConfig {
  if (setting === undefined) return {};
  return { capPerItem: typeof setting === 'object' ? (setting.capPerItem ?? 0) : 0 };
}

const capped = (config: Readonly<ActorCapsConfig>) => (config.capPerItem ?? 0) > 0;

/** The option's fields of the board's view (BoardViewDto takes them): their schema. */
class CapPerItemViewFields {
  @CapPerItemViewProperty()
  capPerItem?: number;
}

/** `actors: { capPerItem }` and actor weights: actor_caps_lib.lua's hooks weigh and cap each contribution. */
export const actorCapsOption: BoardOption<ActorCapsConfig> = {
  viewFields: CapPerItemViewFields,
  name: 'actor-caps',
  fields: ['capPerItem'],
  // The PUT sets the cap with the actors option's field: `actors: { capPerItem }`.
  fromPut: (body) => capOf(body.actors as Parameters<typeof capOf>[0]),
  luaModules: luaModulesIn(__dirname, 'actor_caps_lib.lua'),
  fromStored: (fields) => (Number(fields.capPerItem ?? 0) > 0 ? { capPerItem: Number(fields.capPerItem) } : {}),
  fromReply: (fields) => {
    const cap = fields.capPerItem ?? 0;
    if (typeof cap !== 'number' || !Number.isInteger(cap) || cap < 0)
      throw new Error(`capPerItem ${JSON.stringify(fields.capPerItem)} is not a cap`);
    return cap > 0 ? { capPerItem: cap } : {};
  },
  view: (config) => (capped(config) ? { capPerItem: config.capPerItem } : {}),
  writeCostPerPlace: (config) => (capped(config) ? ACTOR_CAP_WRITE_COST : 0),
  costliest: { capPerItem: CAP_PER_ITEM.max },
};
