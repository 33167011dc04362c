/**
 * The library cut short part by part for bench/write-instructions.ts (WRITE_BENCH_CUTS): each cut's source
 * text and what replaces it.
 */
import { RANKING } from '../src/ranking/ranking.functions';

/** increment.lua's WORK_BUDGET: what a coalesced call's counts of the exceptions ahead weigh at most (a window 1). */
export const WORK_BUDGET = Number(/local WORK_BUDGET = (\d+)/.exec(RANKING.library.source)?.[1]);

/**
 * Copies of the library, each loaded in its place (FUNCTION LOAD REPLACE under its own name, so the
 * service's calls run it) with one part cut short: a row's instructions without that part. Their
 * answers may be wrong; each attempt writes new items and actors, so no row reads another's.
 */
export const CUTS: Array<{ label: string; from: string; to: string }> = [
  {
    label: 'no work budget in a coalesced increment (WORK_BUDGET past any: only the units bound the call)',
    from: `local WORK_BUDGET = ${WORK_BUDGET}\n`,
    to: 'local WORK_BUDGET = 1e308\n',
  },
  {
    label: "a write rank's exceptions counted in Lua, as before moderation's stored_ahead (its floor past any)",
    from: 'local STORED_COUNT_FLOOR = 16\n',
    to: 'local STORED_COUNT_FLOOR = 1e9\n',
  },
  {
    label: "a write rank's exceptions ahead counted as none (stored_ahead answers 0)",
    from: 'local function stored_ahead(top_key, ex, count, score)\n',
    to: 'local function stored_ahead(top_key, ex, count, score)\n  if top_key then return 0 end\n',
  },
  {
    label: 'no exceptions (moderation) asked',
    from: 'local function exceptions_hook(top_key)\n',
    to: 'local function exceptions_hook(top_key)\n  if top_key then return nil end\n',
  },
  {
    label: "no window rank's exceptions (shown_rank answers the rank)",
    from: 'local function shown_rank(top_key, item, rank, score)\n',
    to: 'local function shown_rank(top_key, item, rank, score)\n  if rank then return rank end\n',
  },
  {
    label: "no view's exceptions (except_listing answers its base)",
    from: 'local function except_listing(base, view)\n',
    to: 'local function except_listing(base, view)\n  if view then return base end\n',
  },
  {
    label: "a window rank's exceptions' ZMSCORE only (scored keeps none)",
    from: "  local held = #items > 0 and redis.call('ZMSCORE', top_key, unpack(items)) or {}\n",
    to: "  local held = #items > 0 and redis.call('ZMSCORE', top_key, unpack(items)) or {}\n  if top_key then ex.scores = {} return ex end\n",
  },
  {
    label: 'no tie order kept (tie_order_changed does nothing)',
    from: 'local function tie_order_changed(top_key, item, score)\n',
    to: 'local function tie_order_changed(top_key, item, score)\n  if top_key then return end\n',
  },
  {
    label: 'every event counted as sent (no cap: ACTORS.counted answers the amount)',
    from: 'function ACTORS.counted(slots_key, slot_start, actor, item, amount)\n',
    to: 'function ACTORS.counted(slots_key, slot_start, actor, item, amount)\n  if slots_key then return amount end\n',
  },
  {
    label: "no actor's contribution kept (ACTORS.add does nothing)",
    from: 'function ACTORS.add(slots_key, top_key, slot_start, actor, item, amount, sent, fresh)\n',
    to: 'function ACTORS.add(slots_key, top_key, slot_start, actor, item, amount, sent, fresh)\n  if slots_key then return end\n',
  },
];
