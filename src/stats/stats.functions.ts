import { join } from 'node:path';
import { intReply, Reply } from '../redis/replies';
import { decodeIdempotent, IdemCall, idemArgs } from '../redis/idempotency';
import { defineLibrary, handlerModules, typedFunction } from '../redis/function-library';
import { IDEM_LIBRARY, KEYS_LIBRARY } from '../redis/scripts';
import { Histogram, isHistogramField, Moments } from './stats-math';
import type { StatsKeys } from './stats-keys';

/** Where a write landed: the hour the caller asked for was the stored current hour, the previous one, or too old. */
export type WriteStatus = 'current' | 'previous' | 'dropped';

export interface WriteResult {
  status: WriteStatus;
  count: number;
  sum: number;
  sumsq: number;
}

/** One hour of one context/type as stored. */
export interface StoredHour {
  hourStart: number;
  moments: Moments;
  histogram: Histogram;
}

/** A context/type's two hour hashes. */
export interface PairCall {
  keys: StatsKeys;
  context: string;
  type: string;
}

const dir = join(__dirname, 'scripts');
const STATUS: Record<number, WriteStatus> = { 0: 'dropped', 1: 'current', 2: 'previous' };

function hourKeys(call: PairCall): string[] {
  return [call.keys.current(call.context, call.type), call.keys.previous(call.context, call.type)];
}

/** { status, count, sum, sumsq } (figures as strings: they are floats), or { 0 } when dropped. */
function writeResult(reply: Reply): WriteResult {
  reply.expectLength(1, true);
  const status = STATUS[reply.int(0)];
  if (status === undefined) throw reply.unexpected(0, 'a status of 0, 1 or 2');
  if (status === 'dropped') return { status, count: 0, sum: 0, sumsq: 0 };
  reply.expectLength(4);
  return { status, count: reply.number(1), sum: reply.number(2), sumsq: reply.number(3) };
}

/** One hour hash as HGETALL lists it; undefined when it holds no hour. */
function storedHour(reply: Reply): StoredHour | undefined {
  reply.expectPairsFrom(0);
  const fields = new Map<string, string>();
  for (let i = 0; i < reply.length; i += 2) fields.set(reply.string(i), reply.string(i + 1));
  const count = Number(fields.get('count'));
  if (!fields.has('hour') || !(count > 0)) return undefined;
  const num = (name: string) => Number(fields.get(name));
  const histogram: Histogram = new Map();
  for (const [field, value] of fields) if (isHistogramField(field)) histogram.set(field, Number(value));
  return {
    hourStart: num('hour'),
    moments: {
      count,
      sum: num('sum'),
      sumsq: num('sumsq'),
      min: num('min'),
      max: num('max'),
      mean: num('mean'),
      m2: num('m2'),
    },
    histogram,
  };
}

function momentArgs(m: Moments): string[] {
  return [m.count, m.sum, m.sumsq, m.min, m.max, m.mean, m.m2].map(String);
}

/** Every stats function: keys and arguments built from domain values, replies checked (see each .lua header). */
export const STATS_FUNCTIONS = {
  record: typedFunction({
    name: 'tbStatsRecord',
    handler: 'record',
    numberOfKeys: 2,
    build: (
      call: PairCall & {
        nowMs: number;
        hourStart: number;
        value: number;
        histogramField: string;
        idem?: IdemCall;
        /** false: answer only the stored answer of the key (TB_NOT_STORED when none) */
        apply: boolean;
      },
    ) => ({
      keys: hourKeys(call),
      // The hour comes back on a replay: the first answer named the hour it was recorded in.
      args: [
        call.nowMs,
        call.hourStart,
        String(call.value),
        call.histogramField,
        ...idemArgs(call.idem, String(call.hourStart)),
        call.apply ? 1 : 0,
      ],
    }),
    decode: (raw, call) => decodeIdempotent('tbStatsRecord', raw, call.idem, writeResult),
  }),

  merge: typedFunction({
    name: 'tbStatsMerge',
    handler: 'merge',
    numberOfKeys: 2,
    build: (call: PairCall & { nowMs: number; hourStart: number; moments: Moments; histogram: Histogram }) => ({
      keys: hourKeys(call),
      args: [
        call.nowMs,
        call.hourStart,
        ...momentArgs(call.moments),
        ...[...call.histogram].flatMap(([field, count]) => [field, count]),
      ],
    }),
    decode: (raw) => writeResult(new Reply('tbStatsMerge', raw)),
  }),

  indexAdmit: typedFunction({
    name: 'tbStatsIndexAdmit',
    handler: 'index_admit',
    numberOfKeys: 1,
    build: (call: {
      keys: StatsKeys;
      member: string;
      hourStart: number;
      oldestLiveHour: number;
      /** Most live pairs (0: no cap). */
      cap: number;
      /** New pairs the client may create (UNLIMITED: no quota). */
      newPairs: number;
    }) => ({
      keys: [call.keys.index()],
      args: [call.oldestLiveHour, call.hourStart, call.member, call.cap, call.newPairs],
    }),
    /** true when the pair was new */
    decode: (raw) => intReply('tbStatsIndexAdmit', raw) === 1,
  }),

  // allow-oom: the pruner only removes entries, so it keeps running on a full Redis.
  indexPrune: typedFunction({
    name: 'tbStatsIndexPrune',
    handler: 'index_prune',
    flags: ['allow-oom'],
    numberOfKeys: 1,
    build: (call: { keys: StatsKeys; oldestLiveHour: number; batch: number }) => ({
      keys: [call.keys.index()],
      args: [call.oldestLiveHour, call.batch],
    }),
    /** entries removed */
    decode: (raw) => intReply('tbStatsIndexPrune', raw),
  }),

  read: typedFunction({
    name: 'tbStatsRead',
    handler: 'read',
    flags: ['no-writes'],
    numberOfKeys: 2,
    build: (call: PairCall) => ({ keys: hourKeys(call), args: [] }),
    /** The stored hours, current hash first. */
    decode: (raw) => {
      const reply = new Reply('tbStatsRead', raw).expectLength(2);
      return [reply.nested(0), reply.nested(1)].map(storedHour).filter((hour) => hour !== undefined);
    },
  }),
};

/**
 * tb_stats: the stats' functions, loaded once per node and called by FCALL / FCALL_RO like tb_ranking.
 * Its version is derived from its assembled Lua (keys_lib, idem_lib and stats_lib included).
 */
export const STATS = defineLibrary({
  name: 'tb_stats',
  modules: [KEYS_LIBRARY, IDEM_LIBRARY, join(dir, 'stats_lib.lua'), ...handlerModules(dir, STATS_FUNCTIONS)],
  functions: STATS_FUNCTIONS,
});
