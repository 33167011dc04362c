import { join } from 'node:path';
import { Reply } from '../../redis/replies';
import { IDEM_LIBRARY, KEYS_LIBRARY, ScriptCall } from '../../redis/scripts';
import { IdemCall } from '../../redis/idempotency';
import { PreparedBoard, ShardKeys, windowArgsOf } from './board';
import type { ScoredItem } from './ranking.types';
import { slotRule, WindowConfig } from './window-math';

const lua = join(__dirname, 'lua');

/**
 * The shared Lua modules of a function library on boards (tb_ranking, tb_ingest), in the order they
 * need each other: keys_lib's sibling_key, call_lib's per-call KEYS, ARGV and VIEWS (bound by every
 * function's begin_call), idem_lib, views, the max / min / last aggregates, windows, snapshots, then the common start of board writes.
 * A change to any of them changes the derived version of every library holding them.
 */
export const RANKING_MODULES = [
  KEYS_LIBRARY,
  join(lua, 'call_lib.lua'),
  IDEM_LIBRARY,
  join(lua, 'views_lib.lua'),
  join(lua, 'segment_views_lib.lua'),
  // who contributed what (boards with actors): expiry (window_lib) drains it, unique views read it.
  join(lua, 'actor_lib.lua'),
  // ties: first and item data: window_lib's results changes call their hooks.
  join(lua, 'ties_lib.lua'),
  join(lua, 'item_data_lib.lua'),
  join(lua, 'aggregate_lib.lua'),
  // A calendar window's chunked archive: window_lib's expiry drives it, snapshot_lib's boundary starts it.
  join(lua, 'archive_lib.lua'),
  // The shard's slot due (in its config): window_lib's expiry skips its check before it.
  join(lua, 'slot_due_lib.lua'),
  join(lua, 'window_lib.lua'),
  join(lua, 'snapshot_lib.lua'),
  join(lua, 'board_write_lib.lua'),
  join(lua, 'segment_lib.lua'),
];

/** What every script on a board's keys gets: the cached config (its version is checked), the time and the expiry budget. */
export interface BoardCall {
  board: PreparedBoard;
  shard: ShardKeys;
  nowMs: number;
  /** Most expired-slot fields one call drains (EXPIRE_CHUNK). */
  budgetFields: number;
}

/** A read of one window of one shard. */
export interface WindowCall extends BoardCall {
  window: WindowConfig;
}

/** An idempotent write: its key (when the client sent one); the answer is built with the board's window names. */
export interface WriteCall extends BoardCall {
  idem?: IdemCall;
}

/** The header of a call on one shard of a board: `budgetFields` is the store's EXPIRE_CHUNK. */
export function boardCall(board: PreparedBoard, shard: ShardKeys, nowMs: number, budgetFields: number): BoardCall {
  return { board, shard, nowMs, budgetFields };
}

/** [version, now, budget, W, period_1, interval_1, createdAtMs_1, origin_1, ...]: what every multi-window script starts with. */
export function boardArgs(
  call: BoardCall,
  windowArgs = windowArgsOf(call.board.config.windows, call.nowMs),
): Array<string | number> {
  return [call.board.config.version, call.nowMs, call.budgetFields, ...windowArgs];
}

/** The single-window reads: [cfg, slots, top] and [version, now, budget, period, interval, origin, ...extra]. */
export function windowRead(call: WindowCall, extra: Array<string | number>): ScriptCall {
  const { keys } = call.shard;
  const { window } = call;
  const rule = slotRule(window, call.nowMs);
  return {
    keys: [keys.cfg(), keys.slots(window.name), keys.top(window.name)],
    args: [
      call.board.config.version,
      call.nowMs,
      call.budgetFields,
      rule.periodSec,
      rule.intervalSec,
      rule.originSec,
      ...extra,
    ],
  };
}

/** (item, score) pairs from entry `first` on. */
export function rowsOf(reply: Reply, first: number): ScoredItem[] {
  reply.expectPairsFrom(first);
  const rows: ScoredItem[] = [];
  for (let i = first; i < reply.length; i += 2) rows.push({ item: reply.string(i), score: reply.number(i + 1) });
  return rows;
}
