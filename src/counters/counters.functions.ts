import { defineLibrary, functionSet, handlerModules, typedFunction } from '../redis/function-library';
import { join } from 'node:path';
import { namedFunction } from '../redis/named-function';
import { Reply } from '../redis/replies';
import { bareHeader, callArgs } from '../redis/function-args';
import { decodeIdempotent, IdemCall, IDEM_FIELDS, idemNamedArgs } from '../redis/idempotency';
import { IDEM_LIBRARY, KEYS_LIBRARY } from '../redis/scripts';
import type { Sample } from './counter-math';
import type { CounterKeys } from './counter-keys';
import { COUNTER_EXPIRY_GRACE_MS } from './counters.limits';

/** A counter in its bucket, with the precisions and retention the service is configured with. */
export interface CounterCall {
  keys: CounterKeys;
  name: string;
  precisionsSec: number[];
  /** Samples kept per precision. */
  samples: number;
}

/** What one cleaner script call did on one page of one bucket. */
export interface CleanPage {
  /** Cursor for the next page; '' when the bucket is done. */
  next: string;
  visited: number;
  due: number;
  slicesRemoved: number;
  entriesRemoved: number;
  /** Names entries of counters that left every retention. */
  namesRemoved: number;
}

/** [known index, count hash of each precision]: every key of a counter, in its bucket's tag. */
function counterKeys(call: CounterCall): string[] {
  return [call.keys.knownOf(call.name), ...call.precisionsSec.map((p) => call.keys.count(call.name, p))];
}

/** The configured precisions as one argument, in the order of the count hashes (counters_lib's precisions_of). */
function precisionsArg(call: CounterCall): string {
  return call.precisionsSec.join(',');
}

const INCREMENT_ARGS = [
  'samples',
  'at_sec',
  'count',
  'name',
  ...IDEM_FIELDS,
  'new_counters',
  'bucket_cap',
  'grace_ms',
  'precisions',
] as const;
const INCREMENT_REPLY = ['landed'] as const;
/** What a counter's increment created: the counters new to its bucket. */
const INCREMENT_CREATED = ['counters'] as const;

/**
 * The precisions (s) an increment landed in: its named reply's `landed`, or an answer stored by a
 * library from before the named contract (the precisions as integers), replayed by this one.
 */
function landedOf(reply: Reply): number[] {
  if (reply.length !== INCREMENT_REPLY.length || !reply.isString(0)) return reply.intsFrom(0);
  const landed = reply.string(INCREMENT_REPLY.indexOf('landed'));
  return landed === '' ? [] : landed.split(',').map(Number);
}

/** Every counters function: keys and arguments built from domain values, replies checked (see each .lua header). */
export const COUNTER_FUNCTIONS = functionSet('tbCounter', {
  increment: typedFunction({
    numberOfKeys: 'dynamic',
    contract: { args: INCREMENT_ARGS, reply: INCREMENT_REPLY, created: INCREMENT_CREATED },
    build: (
      call: CounterCall & {
        nowMs: number;
        atSec: number;
        count: number;
        idem?: IdemCall;
        /** New counters the client may create (UNLIMITED: no quota). */
        newCounters: number;
        /** Most live counters in the counter's bucket (0: no cap). */
        bucketCap: number;
      },
    ) => ({
      keys: counterKeys(call),
      args: callArgs(bareHeader(call.nowMs), INCREMENT_ARGS, {
        samples: call.samples,
        at_sec: call.atSec,
        count: call.count,
        name: call.name,
        // The sample's time comes back on a replay: a request without `at` was answered with its own.
        ...idemNamedArgs(call.idem, String(call.atSec)),
        new_counters: call.newCounters,
        bucket_cap: call.bucketCap,
        grace_ms: COUNTER_EXPIRY_GRACE_MS,
        precisions: precisionsArg(call),
      }),
    }),
    /** The precisions (s) the count landed in, the time it was counted at, and the counters it created. */
    decode: (raw, call) => decodeIdempotent('tbCounterIncrement', raw, call.idem, landedOf, INCREMENT_CREATED),
  }),

  read: namedFunction({
    flags: ['no-writes'],
    numberOfKeys: 2,
    args: ['samples', 'precision_sec', 'from_sec', 'to_sec', 'name', 'precisions'],
    reply: ['known', 'slices'],
    build: (call: CounterCall & { precisionSec: number; nowMs: number; fromSec: number; toSec: number }) => ({
      keys: [call.keys.knownOf(call.name), call.keys.count(call.name, call.precisionSec)],
      header: bareHeader(call.nowMs),
      args: {
        samples: call.samples,
        precision_sec: call.precisionSec,
        from_sec: call.fromSec,
        to_sec: call.toSec,
        name: call.name,
        precisions: precisionsArg(call),
      },
    }),
    decode: (reply) => {
      const slices = reply.nested('slices').expectPairsFrom(0);
      const samples: Sample[] = [];
      for (let i = 0; i < slices.length; i += 2) samples.push({ t: slices.int(i), count: slices.int(i + 1) });
      return { known: reply.flag('known'), samples };
    },
  }),

  // allow-oom: deleting a counter frees memory, so it runs on a full Redis (as the cleaner does).
  delete: namedFunction({
    flags: ['allow-oom'],
    numberOfKeys: 'dynamic',
    args: ['name', 'precisions'],
    reply: ['removed'],
    // Its header's time is 0: a delete reads no clock.
    build: (call: CounterCall) => ({
      keys: counterKeys(call),
      header: bareHeader(0),
      args: { name: call.name, precisions: precisionsArg(call) },
    }),
    /** Index entries and hashes removed. */
    decode: (reply) => reply.int('removed'),
  }),

  clean: namedFunction({
    flags: ['allow-oom'],
    numberOfKeys: 1,
    args: ['samples', 'pass', 'cursor', 'page_size'],
    reply: ['next', 'visited', 'due', 'slices_removed', 'entries_removed', 'names_removed'],
    build: (call: {
      keys: CounterKeys;
      bucket: number;
      nowMs: number;
      samples: number;
      pass: number;
      cursor: string;
      pageSize: number;
    }) => ({
      keys: [call.keys.known(call.bucket)],
      header: bareHeader(call.nowMs),
      args: {
        samples: call.samples,
        pass: call.pass,
        cursor: call.cursor,
        page_size: call.pageSize,
      },
    }),
    decode: (reply): CleanPage => ({
      next: reply.string('next'),
      visited: reply.int('visited'),
      due: reply.int('due'),
      slicesRemoved: reply.int('slices_removed'),
      entriesRemoved: reply.int('entries_removed'),
      namesRemoved: reply.int('names_removed'),
    }),
  }),
});

/**
 * tb_counters: the counters' functions, loaded once per node and called by FCALL / FCALL_RO like
 * tb_ranking. Its version is derived from its assembled Lua (keys_lib, idem_lib and counters_lib included).
 */
export const COUNTERS = defineLibrary({
  name: 'tb_counters',
  modules: [
    KEYS_LIBRARY,
    IDEM_LIBRARY,
    join(__dirname, 'scripts', 'counters_lib.lua'),
    ...handlerModules(join(__dirname, 'scripts'), COUNTER_FUNCTIONS),
  ],
  functions: COUNTER_FUNCTIONS,
});
