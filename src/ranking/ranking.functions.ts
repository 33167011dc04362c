import { join } from 'node:path';
import { defineLibrary, handlerModules } from '../redis/function-library';
import { ACTOR_WEIGHTS_FUNCTIONS, ActorWeightsFunctions } from './actor-weights/actor-weights.functions';
import { ALIASES_FUNCTIONS, AliasesFunctions } from './aliases/aliases.functions';
import { BOARDS_FUNCTIONS, BoardsFunctions } from './boards/boards.functions';
import { CALENDAR_FUNCTIONS, CalendarFunctions } from './calendar/calendar.functions';
import { RANKING_MODULES } from './core/script-call';
import { EXPIRY_FUNCTIONS, ExpiryFunctions } from './expiry/expiry.functions';
import { FILTERS_FUNCTIONS, FiltersFunctions } from './filters/filters.functions';
import { GROUP_BOARDS_FUNCTIONS, GroupBoardsFunctions } from './group-boards/group-boards.functions';
import { HISTORY_FUNCTIONS, HistoryFunctions } from './history/history.functions';
import { ITEMS_FUNCTIONS, ItemsFunctions } from './items/items.functions';
import { LEAGUES_FUNCTIONS, LeaguesFunctions } from './leagues/leagues.functions';
import { LOOKUP_FUNCTIONS, LookupFunctions } from './lookup/lookup.functions';
import { MODERATION_FUNCTIONS, ModerationFunctions } from './moderation/moderation.functions';
import { READS_FUNCTIONS, ReadsFunctions } from './reads/reads.functions';
import { RETRACTION_FUNCTIONS, RetractionFunctions } from './retraction/retraction.functions';
import { SCORES_FUNCTIONS, ScoresFunctions } from './scores/scores.functions';
import { SHARDS_FUNCTIONS, ShardsFunctions } from './shards/shards.functions';
import { STANDING_FUNCTIONS, StandingFunctions } from './standing/standing.functions';
import { SPAN_MODULE, SPANS_FUNCTIONS, SpansFunctions } from './spans/spans.functions';
import { VIEWS_FUNCTIONS, ViewsFunctions } from './views/views.functions';
import { WRITE_RECORDS, WRITES_FUNCTIONS, WritesFunctions } from './writes/writes.functions';

/**
 * Each slice's part of the library (its definitions, and the class RankingCoreModule provides its
 * store), beside the directory holding their Lua (one `<handler>.lua` per function).
 */
export const RANKING_SLICES = [
  ['actor-weights', ActorWeightsFunctions],
  ['aliases', AliasesFunctions],
  ['boards', BoardsFunctions],
  ['calendar', CalendarFunctions],
  ['expiry', ExpiryFunctions],
  ['filters', FiltersFunctions],
  ['group-boards', GroupBoardsFunctions],
  ['history', HistoryFunctions],
  ['items', ItemsFunctions],
  ['leagues', LeaguesFunctions],
  ['lookup', LookupFunctions],
  ['moderation', ModerationFunctions],
  ['reads', ReadsFunctions],
  ['retraction', RetractionFunctions],
  ['scores', ScoresFunctions],
  ['shards', ShardsFunctions],
  ['spans', SpansFunctions],
  ['standing', StandingFunctions],
  ['views', ViewsFunctions],
  ['writes', WritesFunctions],
] as const;

/**
 * tb_ranking: every ranking function, loaded once per node (FUNCTION LOAD REPLACE) and called by
 * FCALL / FCALL_RO. Its name carries a hash of its assembled source (function-library.ts), so any change
 * of its Lua or registrations loads beside the old one: instances of the old and new code run side by side.
 */
export const RANKING = defineLibrary({
  name: 'tb_ranking',
  modules: [
    ...RANKING_MODULES,
    SPAN_MODULE,
    ...RANKING_SLICES.flatMap(([slice, Part]) => handlerModules(join(__dirname, slice, 'scripts'), Part.definitions)),
  ],
  records: WRITE_RECORDS,
  // Each name is one slice's own (a spread would hide a second one: the registry spec counts them).
  functions: {
    ...ACTOR_WEIGHTS_FUNCTIONS,
    ...ALIASES_FUNCTIONS,
    ...BOARDS_FUNCTIONS,
    ...CALENDAR_FUNCTIONS,
    ...EXPIRY_FUNCTIONS,
    ...FILTERS_FUNCTIONS,
    ...GROUP_BOARDS_FUNCTIONS,
    ...HISTORY_FUNCTIONS,
    ...ITEMS_FUNCTIONS,
    ...LEAGUES_FUNCTIONS,
    ...LOOKUP_FUNCTIONS,
    ...MODERATION_FUNCTIONS,
    ...READS_FUNCTIONS,
    ...RETRACTION_FUNCTIONS,
    ...SCORES_FUNCTIONS,
    ...SHARDS_FUNCTIONS,
    ...SPANS_FUNCTIONS,
    ...STANDING_FUNCTIONS,
    ...VIEWS_FUNCTIONS,
    ...WRITES_FUNCTIONS,
  },
});
