import { join } from 'node:path';
import { defineLibrary, handlerModules } from '../redis/function-library';
import { BOARDS_FUNCTIONS } from './boards/boards.functions';
import { CALENDAR_FUNCTIONS } from './calendar/calendar.functions';
import { RANKING_MODULES } from './core/script-call';
import { EXPIRY_FUNCTIONS } from './expiry/expiry.functions';
import { HISTORY_FUNCTIONS } from './history/history.functions';
import { ITEMS_FUNCTIONS } from './items/items.functions';
import { LOOKUP_FUNCTIONS } from './lookup/lookup.functions';
import { READS_FUNCTIONS } from './reads/reads.functions';
import { RETRACTION_FUNCTIONS } from './retraction/retraction.functions';
import { SCORES_FUNCTIONS } from './scores/scores.functions';
import { SHARDS_FUNCTIONS } from './shards/shards.functions';
import { SPAN_MODULE, SPANS_FUNCTIONS } from './spans/spans.functions';
import { VIEWS_FUNCTIONS } from './views/views.functions';
import { WRITES_FUNCTIONS } from './writes/writes.functions';

/** Each slice's functions, beside the directory holding their Lua (one `<handler>.lua` per function). */
export const RANKING_SLICES = [
  ['boards', BOARDS_FUNCTIONS],
  ['calendar', CALENDAR_FUNCTIONS],
  ['expiry', EXPIRY_FUNCTIONS],
  ['history', HISTORY_FUNCTIONS],
  ['items', ITEMS_FUNCTIONS],
  ['lookup', LOOKUP_FUNCTIONS],
  ['reads', READS_FUNCTIONS],
  ['retraction', RETRACTION_FUNCTIONS],
  ['scores', SCORES_FUNCTIONS],
  ['shards', SHARDS_FUNCTIONS],
  ['spans', SPANS_FUNCTIONS],
  ['views', VIEWS_FUNCTIONS],
  ['writes', WRITES_FUNCTIONS],
] as const;

/**
 * tb_ranking: every ranking function, loaded once per node (FUNCTION LOAD REPLACE) and called by
 * FCALL / FCALL_RO. Bump `version` with every change of its Lua (the shared modules included) or of a
 * function's keys, args or reply: instances of the old and new code then run side by side.
 */
export const RANKING = defineLibrary({
  name: 'tb_ranking',
  modules: [
    ...RANKING_MODULES,
    SPAN_MODULE,
    ...RANKING_SLICES.flatMap(([slice, functions]) => handlerModules(join(__dirname, slice, 'scripts'), functions)),
  ],
  // Each name is one slice's own (a spread would hide a second one: the registry spec counts them).
  functions: {
    ...BOARDS_FUNCTIONS,
    ...CALENDAR_FUNCTIONS,
    ...EXPIRY_FUNCTIONS,
    ...HISTORY_FUNCTIONS,
    ...ITEMS_FUNCTIONS,
    ...LOOKUP_FUNCTIONS,
    ...READS_FUNCTIONS,
    ...RETRACTION_FUNCTIONS,
    ...SCORES_FUNCTIONS,
    ...SHARDS_FUNCTIONS,
    ...SPANS_FUNCTIONS,
    ...VIEWS_FUNCTIONS,
    ...WRITES_FUNCTIONS,
  },
});
