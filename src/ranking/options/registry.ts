import type { Type } from '@nestjs/common';
import { ScriptReplyError } from '../../redis/replies';
import { actorCapsOption } from './actor-caps/actor-caps.option';
import { actorsOption } from './actors/actors.option';
import { aggregateOption } from './aggregate/aggregate.option';
import type { BoardOption, BoardSettings, BoardWrite, Intersection } from './board-option';
import { calendarOption } from './calendar/calendar.option';
import { groupOfOption } from './group-of/group-of.option';
import { groupsOption } from './groups/groups.option';
import { itemDataOption } from './item-data/item-data.option';
import { leaguesOption } from './leagues/leagues.option';
import { moderationOption } from './moderation/moderation.option';
import { metricsOption } from './metrics/metrics.option';
import { orderOption } from './order/order.option';
import { segmentsOption } from './segments/segments.option';
import { tailOption } from './tail/tail.option';
import { tiebreakOption } from './tiebreak/tiebreak.option';
import { snapshotsOption } from './snapshots/snapshots.option';
import { tiesOption } from './ties/ties.option';
import { viewsOption } from './views/views.option';

/** Every board option, one line each (src/ranking/options/<option>/). */
export const BOARD_OPTIONS = [
  tiesOption,
  orderOption,
  tiebreakOption,
  actorCapsOption,
  groupsOption,
  moderationOption,
  metricsOption,
  tailOption,
  groupOfOption,
  leaguesOption,
  calendarOption,
  itemDataOption,
  aggregateOption,
  viewsOption,
  snapshotsOption,
  segmentsOption,
  actorsOption,
] as const;

type FragmentsOf<O> = O extends BoardOption<infer C, infer V, infer P> ? { config: C; view: V; put: P } : never;
type Fragments = FragmentsOf<(typeof BOARD_OPTIONS)[number]>;

/** The options' fragments of a board config, together (BoardConfig, PutBoardCommand and the board view extend it). */
export type BoardOptionsConfig = Intersection<Fragments['config']>;

/** What the board's view shows of the options (the board view extends it). */
export type BoardOptionsView = Intersection<Fragments['view']>;

/** The options' fields of the board PUT body, together (PutBoardDto extends it). */
export type BoardOptionsPut = Intersection<Fragments['put']>;

/** The options' classes of their board PUT fields, in registry order (PutBoardDto takes them in as it loads). */
export function optionPutFields(): Array<Type<object>> {
  return BOARD_OPTIONS.flatMap((option): Array<Type<object>> => (option.putFields ? [option.putFields] : []));
}

/** The options' classes of their board view fields, in registry order (BoardViewDto takes them in as it loads). */
export function optionViewFields(): Array<Type<object>> {
  return BOARD_OPTIONS.flatMap((option): Array<Type<object>> => (option.viewFields ? [option.viewFields] : []));
}

/** The options' Lua modules (RANKING_MODULES holds them). */
export const OPTION_LUA_MODULES: readonly string[] = BOARD_OPTIONS.flatMap((option) => option.luaModules);

/** The options' fields of a board PUT (absent ones stay absent: they keep the stored setting). */
export function optionsOf(input: Readonly<BoardOptionsConfig>): BoardOptionsConfig {
  const fields = BOARD_OPTIONS.flatMap((option) => option.fields);
  return Object.fromEntries(fields.map((field) => [field, input[field]])) as BoardOptionsConfig;
}

/** The options' settings a board PUT body asks (absent ones stay absent: they keep the stored setting). */
export function optionsOfPut(body: Readonly<BoardOptionsPut>): BoardOptionsConfig {
  const input = body as Readonly<Record<string, unknown>>;
  const settings = BOARD_OPTIONS.map(
    (option): object =>
      option.fromPut?.(input) ?? Object.fromEntries(option.fields.map((field) => [field, input[field]])),
  );
  return Object.assign({}, ...settings) as BoardOptionsConfig;
}

/** The options' settings from a board's stored config hash. */
export function optionsFromStored(fields: Readonly<Record<string, string>>): BoardOptionsConfig {
  return Object.assign({}, ...BOARD_OPTIONS.map((option) => option.fromStored(fields))) as BoardOptionsConfig;
}

/** The options' settings a function answered as a JSON object (board_put); a malformed one is a ScriptReplyError. */
export function optionsFromReply(fn: string, json: string): BoardOptionsConfig {
  try {
    const fields = JSON.parse(json) as Record<string, unknown>;
    return Object.assign({}, ...BOARD_OPTIONS.map((option) => option.fromReply(fields))) as BoardOptionsConfig;
  } catch (error) {
    throw new ScriptReplyError(fn, `options settings ${json}: ${(error as Error).message}`);
  }
}

/** The options' fields a board's view answers. */
export function optionsView(config: Readonly<BoardOptionsConfig>): Partial<BoardOptionsView> {
  return Object.assign({}, ...BOARD_OPTIONS.map((option) => option.view(config))) as Partial<BoardOptionsView>;
}

/** Cost units the options add to each results place of a write. */
export function optionsWriteCostPerPlace(config: Readonly<BoardOptionsConfig>): number {
  return BOARD_OPTIONS.reduce((sum, option) => sum + (option.writeCostPerPlace?.(config) ?? 0), 0);
}

/** Cost units the options add to each entry of a write, once. */
export function optionsWriteCostPerEntry(config: Readonly<BoardOptionsConfig>): number {
  return BOARD_OPTIONS.reduce((sum, option) => sum + (option.writeCostPerEntry?.(config) ?? 0), 0);
}

/** The options set as a write's costliest. */
export const COSTLIEST_OPTIONS: BoardOptionsConfig = Object.assign(
  {},
  ...BOARD_OPTIONS.map((option) => option.costliest ?? {}),
) as BoardOptionsConfig;

/** The boards COSTLIEST_ENTRY weighs: COSTLIEST_OPTIONS, and it with each option's `costliestAmong` setting. */
export const COSTLIEST_BOARDS: readonly BoardOptionsConfig[] = [
  COSTLIEST_OPTIONS,
  ...BOARD_OPTIONS.flatMap((option): object[] => [...(option.costliestAmong ?? [])]).map(
    (setting) => ({ ...COSTLIEST_OPTIONS, ...setting }) as BoardOptionsConfig,
  ),
];

// The options answering keptScore and writeMismatch: every write and many reads ask them (indexed
// loops: a for-of here kept its iterator, about 130 bytes of every increment).
const KEEPING = BOARD_OPTIONS.filter((option) => option.keptScore !== undefined);
const WRITE_CHECKING = BOARD_OPTIONS.filter((option) => option.writeMismatch !== undefined);

/** What a window of a board of `config` keeps of an item instead of the sum of its events (keptScore); undefined: the sum. */
export function keptScore(config: Readonly<BoardOptionsConfig>): string | undefined {
  for (let i = 0; i < KEEPING.length; i++) {
    const kept = KEEPING[i].keptScore?.(config);
    if (kept !== undefined) return kept;
  }
  return undefined;
}

/** Why board `board` of `config` takes no such write (AGGREGATE_MISMATCH); undefined: it takes it. */
export function writeMismatch(
  config: Readonly<BoardOptionsConfig>,
  board: string,
  write: BoardWrite,
): string | undefined {
  for (let i = 0; i < WRITE_CHECKING.length; i++) {
    const why = WRITE_CHECKING[i].writeMismatch?.(config, board, write);
    if (why !== undefined) return why;
  }
  return undefined;
}

/** What one board-rank count of a lookup weighs on a board of `config`. */
export function optionsCountWeight(config: Readonly<BoardOptionsConfig>): number {
  return BOARD_OPTIONS.reduce((weight, option) => weight * (option.countWeight?.(config) ?? 1), 1);
}

/** The options' count weights in words, as the lookup route describes its cost: " (x3 on ...)" or "". */
export const COUNT_WEIGHT_DOC = ((docs: string[]) => (docs.length === 0 ? '' : ` (${docs.join('; ')})`))(
  BOARD_OPTIONS.flatMap((option) => (option.countWeightDoc ? [option.countWeightDoc] : [])),
);

/** Whether some option makes a window's ranks its order (strict ranks). */
export function strictRanks(config: Readonly<BoardOptionsConfig>): boolean {
  return BOARD_OPTIONS.some((option) => option.strictRanks?.(config) ?? false);
}

/** Whether some option makes lower scores rank higher (`order: asc`). */
export function ascendingScores(config: Readonly<BoardOptionsConfig>): boolean {
  return BOARD_OPTIONS.some((option) => option.ascending?.(config) ?? false);
}

/** Each option's check of the board a PUT leaves; the first refusal throws. */
export function checkOptions(board: BoardSettings): void {
  for (const option of BOARD_OPTIONS) option.check?.(board);
}
