import { ApiPropertyOptional } from '@nestjs/swagger';
import { InvalidInputError } from '../../../common/errors';
import { OptionalCheckedProperty } from '../../../common/dto';
import { flagSetting, settingFields, type BoardOption, luaModulesIn } from '../board-option';
import { CAP_PER_ITEM } from '../actor-caps/actor-caps.option';

/** The option's part of a board config. */
export interface ActorsConfig {
  /** Events may name an actor (actor_lib.lua keeps who contributed what: unique views, retraction). */
  actors?: boolean;
}

/** Its messages: the board PUTs, writes and reads it refuses. */
export const ACTORS_MESSAGES = {
  uniqueWithout: (board: string, view: string) =>
    `views: unique view "${view}" counts distinct actors: board "${board}" needs "actors": true`,
  needSum: (board: string, aggregate: string) =>
    `actors: kept for sum boards only: board "${board}" would aggregate by ${aggregate} (a retraction cannot take one actor's share out of a ${aggregate})`,
  allTime: (board: string, window: string) =>
    `board "${board}": the all-time window "${window}" keeps its events for good; its actors' contributions would then grow without end (use a rolling or calendar window for them)`,
  noActors: (board: string, field: string) =>
    `${field}: board "${board}" keeps no actors; declare "actors": true on the board to send one`,
};

/** A board PUT's `actors`: `true`, `false`, or `{ "capPerItem"?: c }` (actors kept, with a cap). */
export type ActorsSetting = boolean | { capPerItem?: number };

/** The option's field of the board PUT body. */
export interface ActorsPut {
  actors?: ActorsSetting;
}

const ACTORS_MESSAGE = `actors must be true, false or an object like { "capPerItem": 10 } (capPerItem an integer ${CAP_PER_ITEM.min}-${CAP_PER_ITEM.max})`;

function validActors(value: unknown): boolean {
  if (typeof value === 'boolean') return true;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const fields = Object.keys(value);
  if (fields.some((field) => field !== 'capPerItem')) return false;
  const cap = (value as { capPerItem?: unknown }).capPerItem;
  return (
    cap === undefined ||
    (Number.isInteger(cap) && (cap as number) >= CAP_PER_ITEM.min && (cap as number) <= CAP_PER_ITEM.max)
  );
}

/** The board PUT's `actors` field: its schema and validation. */
export const ActorsProperty = () =>
  OptionalCheckedProperty('isActorsSetting', validActors, () => ACTORS_MESSAGE, {
    // The type a declared field reflects (design:type): @nestjs/swagger needs one, and shows oneOf alone.
    type: Object,
    oneOf: [
      { type: 'boolean' },
      {
        type: 'object',
        properties: { capPerItem: { type: 'integer', minimum: CAP_PER_ITEM.min, maximum: CAP_PER_ITEM.max } },
        additionalProperties: false,
      },
    ],
    description:
      'Lets increments and batch entries name an `actor` (and makes a like\'s userId its actor): the board keeps who contributed what (for `unique` views, retractions and actor weights). Sum boards only. `{ "capPerItem": c }`: one actor\'s events add at most c to one item in a window (weights applied first; putting a cap on or taking it off a board holding data needs ?reset=true). Omitted: the current setting (off for a new board)',
  });

/** Whether a PUT's `actors` lets events name actors. */
export function actorsKept(setting: ActorsSetting | undefined): boolean | undefined {
  return setting === undefined ? undefined : setting !== false;
}

/** The board view's `actors` field. */
export const ActorsViewProperty = () =>
  ApiPropertyOptional({ enum: [true], description: 'Present when events may name an actor' });

/**
 * `actors: true`: events name who sent them and the board keeps who contributed what (actor_lib.lua).
 * What an entry's actor adds to a write's cost goes with the entry (write-cost.ts), not with each place.
 * Its check refuses where actors make no sense: a max / min / last board (a retraction could not take one
 * actor's share out of a maximum), an all-time window (contributions would never leave), and a unique
 * view on a board without actors (it would count no one).
 */
export const actorsOption: BoardOption<ActorsConfig, Partial<ActorsConfig>, ActorsPut> = {
  ...settingFields<ActorsPut, Partial<ActorsConfig>>('actors', { put: ActorsProperty, view: ActorsViewProperty }),
  fromPut: (body) => ({ actors: actorsKept(body.actors as ActorsSetting | undefined) }),
  ...flagSetting('actors', luaModulesIn(__dirname, 'actor_lib.lua', 'actor_blocks_lib.lua', 'drain_lib.lua')),
  check: (board) => {
    if (board.options.actors !== true) {
      const unique = board.views?.find((view) => view.mode === 'unique');
      if (unique) throw new InvalidInputError(ACTORS_MESSAGES.uniqueWithout(board.name, unique.name));
      return;
    }
    if (board.aggregate !== 'sum') throw new InvalidInputError(ACTORS_MESSAGES.needSum(board.name, board.aggregate));
    if (board.allTimeWindow !== undefined)
      throw new InvalidInputError(ACTORS_MESSAGES.allTime(board.name, board.allTimeWindow));
  },
};
