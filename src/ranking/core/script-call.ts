import { join } from 'node:path';
import { NamedReply, Reply } from '../../redis/replies';
import { IDEM_LIBRARY, KEYS_LIBRARY, ScriptCall, type ScriptArg } from '../../redis/scripts';
import { OPTION_LUA_MODULES } from '../options/registry';
import { IdemCall } from '../../redis/idempotency';
import { bareHeader, CallHeader, callArgs, NamedArgs } from '../../redis/function-args';
import { Declared, named } from '../../redis/function-library';
import { namedFunction } from '../../redis/named-function';
import { headerWindowsOf, PreparedBoard, ShardKeys } from './board';
import type { ScoredItem } from './ranking.types';
import { slotRule, type WindowConfig } from './window-math';

const lua = join(__dirname, 'lua');

/**
 * The shared Lua modules of a function library on boards (tb_ranking, tb_ingest): a set, in no order.
 * Each declares the modules it requires in its first lines; the library orders them from those
 * (src/redis/lua-modules.ts). A change to any of them changes the derived version of every library
 * holding them.
 */
export const RANKING_MODULES = [
  KEYS_LIBRARY,
  IDEM_LIBRARY,
  ...[
    'board_write_lib',
    'call_lib',
    'chunks_lib',
    'hooks_lib',
    'likes_lib',
    'order_base_lib',
    'order_lib',
    'prune_lib',
    'slot_due_lib',
    'stored_windows_lib',
    'window_drop_lib',
    'window_event_lib',
    'window_lib',
  ].map((module) => join(lua, `${module}.lua`)),
  ...OPTION_LUA_MODULES,
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

/**
 * The header of a read across the shards one node serves: the config version, now and the window's
 * slot rule (its keys are named by `window_key`: a segment's are "<window>~<segment>"); keys[1] routes
 * the call.
 */
function acrossShardsHeader(call: { board: PreparedBoard; nowMs: number; window: WindowConfig }): CallHeader {
  return {
    version: call.board.config.version,
    nowMs: call.nowMs,
    budget: 0,
    windows: [{ ...slotRule(call.window, call.nowMs), createdAtMs: call.window.createdAtMs }],
  };
}

/**
 * A read across the shards one node serves: routed by its first shard's config key, the window and the
 * shards named by `window_key` and `shards`, beside the read's own `args`.
 */
export function acrossShardsCall<Args extends Record<string, ScriptArg>>(
  call: { board: PreparedBoard; nowMs: number; window: WindowConfig; shards: ShardKeys[] },
  args: Args,
): { keys: string[]; header: CallHeader; args: { window_key: string; shards: string } & Args } {
  return {
    keys: [call.shards[0].keys.cfg()],
    header: acrossShardsHeader(call),
    args: {
      window_key: call.shards[0].keys.windowKeyName(call.window.name),
      shards: JSON.stringify(call.shards.map((shard) => shard.keys.cfg())),
      ...args,
    },
  };
}

/** The header of a call on one shard of a board: `budgetFields` is the store's EXPIRE_CHUNK. */
export function boardCall(board: PreparedBoard, shard: ShardKeys, nowMs: number, budgetFields: number): BoardCall {
  return { board, shard, nowMs, budgetFields };
}

/**
 * The named header of a call on a board's shard (headerArgs writes it): every window of the board, or
 * the `windows` the call reads.
 */
export function boardHeader(call: BoardCall, windows: WindowConfig[] = call.board.config.windows): CallHeader {
  return {
    version: call.board.config.version,
    nowMs: call.nowMs,
    budget: call.budgetFields,
    windows: headerWindowsOf(windows, call.nowMs),
  };
}

/** A step's call on the shard's increment keys and its record (`call.record`): the board's header, then `args`. */
export function recordStep<Call extends BoardCall & { record: string }, Args>(args: (call: Call) => Args) {
  return (call: Call) => ({
    keys: [...call.shard.incrementKeys, call.record],
    header: boardHeader(call),
    args: args(call),
  });
}

/** The header of a call on a board's shard that checks its config version and reads no window. */
export function versionHeader(call: BoardCall): CallHeader {
  return { ...bareHeader(call.nowMs), version: call.board.config.version };
}

/**
 * A named single-window read: keys [cfg, slots, top], args the header with the one window, then a
 * value per name of `names` (its contract's args; reader.read_call reads them by name).
 */
export function namedWindowRead<Names extends readonly string[]>(
  call: WindowCall,
  names: Names,
  values: NamedArgs<Names>,
): ScriptCall {
  const { keys } = call.shard;
  const { window } = call;
  return {
    keys: [keys.cfg(), keys.slots(window.name), keys.top(window.name)],
    args: callArgs(boardHeader(call, [window]), names, values),
  };
}

/**
 * A function reading one window by name (namedWindowRead: keys [cfg, slots, top], the header with the
 * window, then `values` by the names of `args`). Such a read drains expired slots, and some rewrite
 * what they derive (a group's scores, a shortened snapshot): writes that free memory or keep it
 * bounded, so it runs on a full Redis too (allow-oom).
 */
export function windowReadFunction<
  In extends WindowCall,
  Out,
  const Args extends readonly string[],
  const Field extends string,
>(definition: {
  handler?: string;
  args: Args;
  reply: readonly Field[];
  values: (call: In) => NamedArgs<Args>;
  decode: (reply: NamedReply<Field>, call: In) => Out;
}): Declared<In, Out> {
  const { handler, args, reply, values, decode } = definition;
  return (id) =>
    named(id, {
      handler,
      flags: ['allow-oom'],
      numberOfKeys: 3,
      contract: { args, reply },
      build: (call: In) => namedWindowRead(call, args, values(call)),
      decode: (raw: unknown, call: In) => decode(new NamedReply(id.name, reply, raw), call),
    });
}

/**
 * A read of what the shard's config keeps per item (its items' groups, their data): no clock, no
 * writes; `field` answers one entry per item asked, in order, which `read` decodes.
 */
export function perItemRead<const Field extends string, Out>(
  field: Field,
  read: (entries: Reply, count: number) => Out[],
): Declared<{ shard: ShardKeys; items: string[] }, Out[]> {
  return namedFunction({
    flags: ['no-writes'],
    numberOfKeys: 1,
    args: ['items'],
    reply: [field],
    build: (call: { shard: ShardKeys; items: string[] }) => ({
      keys: [call.shard.keys.cfg()],
      header: bareHeader(0),
      args: { items: JSON.stringify(call.items) },
    }),
    decode: (reply, call) => read(reply.nested(field), call.items.length),
  });
}

/** A listing's rows: (item, score) records. */
const SCORED_ROW = ['item', 'score'] as const;

/** The (item, score) records of a listing. */
export function rowsOf(reply: Reply): ScoredItem[] {
  return reply.records(SCORED_ROW).map((row) => ({ item: row.string('item'), score: row.number('score') }));
}
