import { ApiPropertyOptional } from '@nestjs/swagger';
import { OptionalCheckedProperty } from '../../../common/dto';
import { InvalidInputError } from '../../../common/errors';
import { isName, NAME_RULE } from '../../../common/names';
import { fieldSetting, type BoardOption, type BoardSettings, luaModulesIn } from '../board-option';
import { LEAGUE_PLACEMENT_WRITE_COST, LEAGUE_SIZE, LEAGUE_TIERS, LEAGUES_MESSAGES as M } from './leagues.limits';

/** A board's `leagues` setting. */
export interface LeaguesSetting {
  /** A calendar window of the board: its periods are the league's. */
  window: string;
  /** Most members of a cohort. */
  size: number;
  /** Tier names, lowest first. */
  tiers: string[];
  /** Each cohort's best this many move a tier up when its period ends. */
  promote: number;
  /** Each cohort's worst this many move a tier down. */
  relegate: number;
}

/** The option's part of a board config. */
export interface LeaguesConfig {
  leagues?: LeaguesSetting;
}

const FIELDS = ['window', 'size', 'tiers', 'promote', 'relegate'];
const within = (value: unknown, min: number, max: number) =>
  Number.isInteger(value) && (value as number) >= min && (value as number) <= max;

/** Why `value` is no leagues setting ('' when it is one). */
export function leaguesProblem(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'leagues must be an object';
  const s = value as Record<string, unknown>;
  const extra = Object.keys(s).find((field) => !FIELDS.includes(field));
  if (extra !== undefined) return `leagues.${extra} is not a field of leagues (${FIELDS.join(', ')})`;
  if (typeof s.window !== 'string' || !isName(s.window))
    return 'leagues.window must name a calendar window of the board';
  if (!within(s.size, LEAGUE_SIZE.min, LEAGUE_SIZE.max))
    return `leagues.size must be an integer from ${LEAGUE_SIZE.min} to ${LEAGUE_SIZE.max}`;
  const tiers = s.tiers;
  if (!Array.isArray(tiers) || tiers.length < LEAGUE_TIERS.min || tiers.length > LEAGUE_TIERS.max)
    return `leagues.tiers must be ${LEAGUE_TIERS.min} to ${LEAGUE_TIERS.max} names, lowest first`;
  if (!tiers.every((tier) => typeof tier === 'string' && isName(tier))) return `leagues.tiers: each name ${NAME_RULE}`;
  if (new Set(tiers).size !== tiers.length) return 'leagues.tiers: names must differ';
  for (const field of ['promote', 'relegate'] as const) {
    if (!within(s[field], 0, s.size as number)) return M.beyondSize(field, Number(s[field]), s.size as number);
  }
  return '';
}

const SCHEMA = {
  type: 'object' as const,
  properties: {
    window: { type: 'string' as const },
    size: { type: 'integer' as const, minimum: LEAGUE_SIZE.min, maximum: LEAGUE_SIZE.max },
    tiers: {
      type: 'array' as const,
      items: { type: 'string' as const },
      minItems: LEAGUE_TIERS.min,
      maxItems: LEAGUE_TIERS.max,
    },
    promote: { type: 'integer' as const, minimum: 0 },
    relegate: { type: 'integer' as const, minimum: 0 },
  },
  required: FIELDS,
  additionalProperties: false,
};

/** The board PUT's `leagues` field: its schema and validation. */
export const LeaguesProperty = () =>
  OptionalCheckedProperty('isLeaguesSetting', (value) => leaguesProblem(value) === '', leaguesProblem, {
    ...SCHEMA,
    description:
      "Leagues over a calendar window's periods (sum boards, without segments or metrics): an item's first event of a period places it in the first cohort of its tier with room (new items: the lowest tier; on a sharded board, the first of its shard's cohorts: cohort c of shard k, 0-based, is numbered (c - 1) × shards + k + 1); when the period ends each cohort's best `promote` move a tier up, its worst `relegate` a tier down. Omitted: the current setting; once set it cannot change, nor can the board's shards",
  });

/** The board view's `leagues` field. */
export const LeaguesViewProperty = () =>
  ApiPropertyOptional({ ...SCHEMA, description: "The board's leagues (see PUT); absent: none" });

function checkBoard(board: BoardSettings): void {
  const leagues = board.options.leagues as LeaguesSetting | undefined;
  if (leagues === undefined) return;
  if (board.holds?.segments) throw new InvalidInputError(M.segments(board.name));
  if (board.aggregate !== 'sum') throw new InvalidInputError(M.notSum(board.name));
  if (board.options.metrics !== undefined) throw new InvalidInputError(M.metrics(board.name));
  if (board.calendarWindows && !board.calendarWindows.includes(leagues.window))
    throw new InvalidInputError(M.notCalendar(board.name, leagues.window));
}

const settingOf = (value: unknown): LeaguesSetting => {
  const problem = leaguesProblem(value);
  if (problem !== '') throw new Error(problem);
  const s = value as LeaguesSetting;
  return { window: s.window, size: s.size, tiers: [...s.tiers], promote: s.promote, relegate: s.relegate };
};

/** `leagues`: leagues_lib.lua places items in cohorts as they write and rolls each closed period once. */
export const leaguesOption: BoardOption<LeaguesConfig> = {
  ...fieldSetting<LeaguesConfig>('leagues', { put: LeaguesProperty, view: LeaguesViewProperty }),
  luaModules: luaModulesIn(__dirname, 'leagues_lib.lua'),
  fromStored: (fields) => (fields.leagues ? { leagues: settingOf(JSON.parse(fields.leagues)) } : {}),
  fromReply: (fields) =>
    fields.leagues === undefined || fields.leagues === null ? {} : { leagues: settingOf(fields.leagues) },
  view: (config) => (config.leagues ? { leagues: config.leagues } : {}),
  // Once an entry: only the league's window places it (its cohort, placement, fill and tie mark).
  writeCostPerEntry: (config) => (config.leagues ? LEAGUE_PLACEMENT_WRITE_COST : 0),
  check: checkBoard,
};
