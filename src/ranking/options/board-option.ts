/**
 * A board option (`ties: first`, and the next ones): one folder under src/ranking/options/ holding
 * its part of the board's JSON and validation, its Lua module and the hooks it registers there, what
 * it weighs, its messages and limits, and its tests. The core and the slices name no option: they ask
 * the registry (registry.ts), which loops over every option through this interface.
 *
 * `Config` is the option's fragment of the board config (BoardConfig, the PUT command and the board's
 * view hold it): optional fields, absent meaning the option is off. `View` is what the board's view
 * shows of it: its config's fields, unless the PUT names the setting otherwise (`segments: { max }`).
 * `Put` is its part of the board PUT body: its config's fields, unless the PUT takes them otherwise.
 */
import { join } from 'node:path';
import type { Type } from '@nestjs/common';

/** A board as a PUT leaves it (omitted settings: the stored ones), for the options to check. */
export interface BoardSettings {
  readonly name: string;
  readonly aggregate: string;
  /** Every option's fields as the board will hold them. */
  readonly options: Readonly<Record<string, unknown>>;
  /** What else the board will hold that an option may not go with (absent: not told). */
  readonly holds?: { readonly views: boolean; readonly segments: boolean; readonly actors: boolean };
  /** Its views' names and modes (absent: not told). */
  readonly views?: ReadonlyArray<{ readonly name: string; readonly mode: string }>;
  /** The name of its all-time window, when it has one. */
  readonly allTimeWindow?: string;
  /** Its shards (absent: not told). */
  readonly shards?: number;
  /** Its windows' slots (a calendar window's `calendar` set) (absent: not told). */
  readonly windows?: ReadonlyArray<{
    readonly name: string;
    readonly periodSec: number;
    readonly intervalSec: number;
    readonly calendar?: object;
  }>;
  /** The names of its calendar windows (absent: not told). */
  readonly calendarWindows?: readonly string[];
  /**
   * Each window's history (`calendar`: its archive, else its snapshots), for those keeping one, and the
   * most windows a board may have (WINDOWS_PER_BOARD), which bounds the history rows it may keep (absent:
   * not told).
   */
  readonly histories?: {
    readonly windows: ReadonlyArray<{ readonly calendar: boolean; readonly keep: number; readonly top: number }>;
    readonly mostWindows: number;
  };
}

/** A write as writeMismatch weighs it: scores or amounts, and its name in a refusal. */
export interface BoardWrite {
  readonly scores: boolean;
  readonly write: string;
}

export interface BoardOption<
  Config extends object,
  View extends object = Partial<Config>,
  Put extends object = Config,
> {
  /** The option's name (its folder's). */
  readonly name: string;
  /**
   * Its fields of the board PUT body: a class declaring them with their schema and validation
   * decorators, which PutBoardDto takes in (so the global ValidationPipe checks them); absent: none.
   */
  readonly putFields?: Type<Put>;
  /**
   * Its setting from a board PUT body (validated by PutBoardDto; absent fields stay absent: they keep
   * the stored setting); absent: the body's fields of its `fields`, as they are.
   */
  fromPut?(body: Readonly<Record<string, unknown>>): Config;
  /** Its fields of the board's view: a class declaring them with their schema decorators, which BoardViewDto takes in; absent: none. */
  readonly viewFields?: Type<View>;
  /** The fields of `Config`: what a board PUT passes on to the store. */
  readonly fields: readonly (keyof Config & string)[];
  /**
   * Its Lua modules (`-- module:` files), loaded into every function library on boards. A module
   * plugs into the core through hooks_lib (`hooks.register_all(...)` at load); scripts of the option's
   * own protocol may call its table by name.
   */
  readonly luaModules: readonly string[];
  /** Its setting from the board's stored config hash (HGETALL of "<tag>:cfg"). */
  fromStored(fields: Readonly<Record<string, string>>): Config;
  /** Its setting as board_put answers it (the settings JSON's fields); throws on one it does not know. */
  fromReply(fields: Readonly<Record<string, unknown>>): Config;
  /** What the board's view answers of the option (absent when off). */
  view(config: Readonly<Config>): View;
  /** Cost units each results place of a write adds (src/ranking/core/write-cost.ts); absent: none. */
  writeCostPerPlace?(config: Readonly<Config>): number;
  /** Cost units each entry of a write adds once, whatever its places (write-cost.ts); absent: none. */
  writeCostPerEntry?(config: Readonly<Config>): number;
  /** The option's setting that makes a write costliest (COSTLIEST_ENTRY); absent: none does. */
  readonly costliest?: Config;
  /**
   * Settings of the option COSTLIEST_ENTRY weighs a board at, each beside the others' `costliest`, when
   * no one setting is costliest (what else a board may hold depends on it); absent: `costliest` alone.
   */
  readonly costliestAmong?: readonly Config[];
  /**
   * What a window keeps of an item instead of the sum of its events (the name messages give it: max,
   * min, last); undefined: the sum. Spans, item retractions, aliases, summed ingest and any-sign
   * listings ask it (registry keptScore); absent: the option keeps sums.
   */
  keptScore?(config: Readonly<Config>): string | undefined;
  /**
   * Why board `board` takes no such write (`scores`: a score or a batch of them, else amounts; `write`:
   * its name in the message), a 409 AGGREGATE_MISMATCH; undefined: it takes it. Absent: any write.
   */
  writeMismatch?(config: Readonly<Config>, board: string, write: BoardWrite): string | undefined;
  /** What one board-rank count of a lookup weighs on such a board; absent: 1 (a plain count). */
  countWeight?(config: Readonly<Config>): number;
  /** countWeight in words for the lookup route's description; absent when it is always 1. */
  readonly countWeightDoc?: string;
  /** Whether a window's ranks are its order (strict: a row's rank is its position, equal scores too); absent: never. */
  strictRanks?(config: Readonly<Config>): boolean;
  /** Whether lower scores rank higher (reads list, count and merge shards lowest first); absent: never. */
  ascending?(config: Readonly<Config>): boolean;
  /** Refuses (InvalidInputError) a board its setting cannot go with; absent: it goes with any. */
  check?(board: BoardSettings): void;
}

/** An option's Lua modules: `files` of its folder `dir` (its __dirname), in the order the libraries load them. */
export const luaModulesIn = (dir: string, ...files: string[]): string[] => files.map((file) => join(dir, file));

/** The part of an option that is no setting of the board (a module and its hooks only): nothing stored, answered or shown. */
export function modulesOnly(
  name: string,
  luaModules: readonly string[],
): Pick<BoardOption<object>, 'name' | 'fields' | 'luaModules' | 'fromStored' | 'fromReply' | 'view'> {
  return { name, fields: [], luaModules, fromStored: () => ({}), fromReply: () => ({}), view: () => ({}) };
}

/**
 * The part of an option that is one boolean field of the board, `field: true` or absent: stored as "1",
 * answered by board_put as JSON true or false, shown when on.
 */
export function flagSetting<Field extends string>(
  field: Field,
  luaModules: readonly string[],
): Pick<
  BoardOption<Partial<Record<Field, boolean>>>,
  'name' | 'fields' | 'luaModules' | 'fromStored' | 'fromReply' | 'view'
> {
  const on = { [field]: true } as Partial<Record<Field, boolean>>;
  return {
    name: field,
    fields: [field],
    luaModules,
    fromStored: (fields) => (fields[field] === '1' ? on : {}),
    fromReply: (fields) => {
      if (fields[field] === undefined || fields[field] === false) return {};
      if (fields[field] === true) return on;
      throw new Error(`${field} ${JSON.stringify(fields[field])} is not true or false`);
    },
    view: (config) => (config[field] === true ? on : {}),
  };
}

/** The two decorators of one setting: as the board PUT takes it, and as the board view shows it. */
/** The intersection of a union's members (the registries join their options' fragments with it). */
export type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

export interface SettingDecorators {
  readonly put: () => PropertyDecorator;
  readonly view: () => PropertyDecorator;
}

/**
 * The option's classes of its one board field, `field` (putFields and viewFields): the PUT's holding it
 * under `decorators.put` (schema and validation), the view's under `decorators.view` (schema), the pair
 * modeProperties and settingProperties declare together.
 */
export function settingFields<Put extends object, View extends object = Put>(
  field: keyof Put & keyof View & string,
  decorators: SettingDecorators,
): { putFields: Type<Put>; viewFields: Type<View> } {
  return {
    putFields: fieldClass<Put>(field, decorators.put()),
    viewFields: fieldClass<View>(field, decorators.view()),
  };
}

/** The part of an option that is one field of the board, named after it: its name, fields and their classes (settingFields). */
export function fieldSetting<Config extends object, View extends object = Config>(
  field: keyof Config & keyof View & string,
  decorators: SettingDecorators,
): Pick<BoardOption<Config, View>, 'name' | 'fields' | 'putFields' | 'viewFields'> {
  return { name: field, fields: [field], ...settingFields<Config, View>(field, decorators) };
}

/**
 * A class declaring `field` under `decorator`, as a class declaration's decorated property would, but
 * with no reflected type (design:type): the decorator's schema names the field's type.
 */
function fieldClass<Fields extends object>(field: string, decorator: PropertyDecorator): Type<Fields> {
  class OptionFields {}
  decorator(OptionFields.prototype, field);
  return OptionFields as Type<Fields>;
}

/** A mode field as a function's reply answers it: one of `modes`, anything else a corrupt reply (an Error naming it). */
export function modeOf<Mode extends string>(field: string, modes: readonly Mode[], value: unknown): Mode {
  const mode = modes.find((known) => known === value);
  if (mode === undefined) throw new Error(`${field} ${JSON.stringify(value)} is not one of ${modes.join(', ')}`);
  return mode;
}
