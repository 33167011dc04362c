import { defineLibrary, functionSet, handlerModules, typedFunction } from '../redis/function-library';
import { join } from 'node:path';
import { namedFunction } from '../redis/named-function';
import { NamedReply, Reply } from '../redis/replies';
import { bareHeader, callArgs } from '../redis/function-args';
import { decodeIdempotent, IdemCall, IDEM_FIELDS, idemNamedArgs } from '../redis/idempotency';
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

const WRITE_REPLY = ['status', 'count', 'sum', 'sumsq'] as const;
const RECORD_ARGS = ['hour_start', 'value', 'histogram_field', ...IDEM_FIELDS, 'apply'] as const;
const MERGE_ARGS = ['hour_start', 'count', 'sum', 'sumsq', 'min', 'max', 'mean', 'm2', 'histogram'] as const;
const READ_REPLY = ['current', 'previous'] as const;

/**
 * status, count, sum, sumsq by name (figures as strings: they are floats; zeros when dropped). A record
 * replays the answer stored under its key, which a library from before the named contract stored as
 * { 0 } when dropped: read as dropped too.
 */
function writeResult(reply: Reply): WriteResult {
  const field = (name: (typeof WRITE_REPLY)[number]) => WRITE_REPLY.indexOf(name);
  reply.expectLength(1, true);
  const status = STATUS[reply.int(field('status'))];
  if (status === undefined) throw reply.unexpected(field('status'), 'a status of 0, 1 or 2');
  if (status === 'dropped') return { status, count: 0, sum: 0, sumsq: 0 };
  reply.expectLength(WRITE_REPLY.length);
  return {
    status,
    count: reply.number(field('count')),
    sum: reply.number(field('sum')),
    sumsq: reply.number(field('sumsq')),
  };
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

/** A batch's histogram as one argument: each field then its count, joined by commas (merge.lua). */
function histogramArg(histogram: Histogram): string {
  return [...histogram].flatMap(([field, count]) => [field, count]).join(',');
}

/** Every stats function: keys and arguments built from domain values, replies checked (see each .lua header). */
export const STATS_FUNCTIONS = functionSet('tbStats', {
  record: typedFunction({
    numberOfKeys: 2,
    contract: { args: RECORD_ARGS, reply: WRITE_REPLY },
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
      args: callArgs(bareHeader(call.nowMs), RECORD_ARGS, {
        hour_start: call.hourStart,
        value: String(call.value),
        histogram_field: call.histogramField,
        // The hour comes back on a replay: the first answer named the hour it was recorded in.
        ...idemNamedArgs(call.idem, String(call.hourStart)),
        apply: call.apply ? 1 : 0,
      }),
    }),
    decode: (raw, call) => decodeIdempotent('tbStatsRecord', raw, call.idem, writeResult),
  }),

  merge: typedFunction({
    numberOfKeys: 2,
    contract: { args: MERGE_ARGS, reply: WRITE_REPLY },
    build: (call: PairCall & { nowMs: number; hourStart: number; moments: Moments; histogram: Histogram }) => {
      const m = call.moments;
      return {
        keys: hourKeys(call),
        args: callArgs(bareHeader(call.nowMs), MERGE_ARGS, {
          hour_start: call.hourStart,
          ...{ count: String(m.count), sum: String(m.sum), sumsq: String(m.sumsq), min: String(m.min) },
          ...{ max: String(m.max), mean: String(m.mean), m2: String(m.m2) },
          histogram: histogramArg(call.histogram),
        }),
      };
    },
    decode: (raw) => writeResult(new Reply('tbStatsMerge', raw).expectLength(WRITE_REPLY.length)),
  }),

  indexAdmit: namedFunction({
    numberOfKeys: 1,
    args: ['oldest_hour', 'hour_start', 'member', 'cap', 'new_pairs'],
    reply: ['created'],
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
      // Its header's time is 0: the hours come as arguments.
      header: bareHeader(0),
      args: {
        oldest_hour: call.oldestLiveHour,
        hour_start: call.hourStart,
        member: call.member,
        cap: call.cap,
        new_pairs: call.newPairs,
      },
    }),
    /** true when the pair was new */
    decode: (reply) => reply.flag('created'),
  }),

  // allow-oom: the pruner only removes entries, so it keeps running on a full Redis.
  indexPrune: namedFunction({
    flags: ['allow-oom'],
    numberOfKeys: 1,
    args: ['oldest_hour', 'batch'],
    reply: ['removed'],
    build: (call: { keys: StatsKeys; oldestLiveHour: number; batch: number }) => ({
      keys: [call.keys.index()],
      header: bareHeader(0),
      args: { oldest_hour: call.oldestLiveHour, batch: call.batch },
    }),
    /** entries removed */
    decode: (reply) => reply.int('removed'),
  }),

  read: typedFunction({
    flags: ['no-writes'],
    numberOfKeys: 2,
    contract: { args: [], reply: READ_REPLY },
    build: (call: PairCall) => ({ keys: hourKeys(call), args: callArgs(bareHeader(0), [], {}) }),
    /** The stored hours, current hash first. */
    decode: (raw) => {
      const reply = new NamedReply('tbStatsRead', READ_REPLY, raw);
      return [reply.nested('current'), reply.nested('previous')].map(storedHour).filter((hour) => hour !== undefined);
    },
  }),
});

/**
 * tb_stats: the stats' functions, loaded once per node and called by FCALL / FCALL_RO like tb_ranking.
 * Its version is derived from its assembled Lua (keys_lib, idem_lib and stats_lib included).
 */
export const STATS = defineLibrary({
  name: 'tb_stats',
  modules: [KEYS_LIBRARY, IDEM_LIBRARY, join(dir, 'stats_lib.lua'), ...handlerModules(dir, STATS_FUNCTIONS)],
  functions: STATS_FUNCTIONS,
});
