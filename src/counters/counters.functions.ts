import { join } from 'node:path';
import { intReply, Reply } from '../redis/replies';
import { decodeIdempotent, IdemCall, idemArgs } from '../redis/idempotency';
import { defineLibrary, handlerModules, typedFunction } from '../redis/function-library';
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

/** Every counters function: keys and arguments built from domain values, replies checked (see each .lua header). */
export const COUNTER_FUNCTIONS = {
  increment: typedFunction({
    name: 'tbCounterIncrement',
    handler: 'increment',
    numberOfKeys: 'dynamic',
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
      args: [
        call.nowMs,
        call.samples,
        call.atSec,
        call.count,
        call.name,
        // The sample's time comes back on a replay: a request without `at` was answered with its own.
        ...idemArgs(call.idem, String(call.atSec)),
        call.newCounters,
        call.bucketCap,
        COUNTER_EXPIRY_GRACE_MS,
        ...call.precisionsSec,
      ],
    }),
    /** The precisions (s) the count landed in, the time it was counted at; created: [new counters]. */
    decode: (raw, call) => decodeIdempotent('tbCounterIncrement', raw, call.idem, (reply) => reply.intsFrom(0), 1),
  }),

  read: typedFunction({
    name: 'tbCounterRead',
    handler: 'read',
    flags: ['no-writes'],
    numberOfKeys: 2,
    build: (call: CounterCall & { precisionSec: number; nowMs: number; fromSec: number; toSec: number }) => ({
      keys: [call.keys.knownOf(call.name), call.keys.count(call.name, call.precisionSec)],
      args: [call.nowMs, call.samples, call.precisionSec, call.fromSec, call.toSec, call.name, ...call.precisionsSec],
    }),
    decode: (raw) => {
      const reply = new Reply('tbCounterRead', raw).expectLength(1, true).expectPairsFrom(1);
      const samples: Sample[] = [];
      for (let i = 1; i < reply.length; i += 2) samples.push({ t: reply.int(i), count: reply.int(i + 1) });
      return { known: reply.flag(0), samples };
    },
  }),

  // allow-oom: deleting a counter frees memory, so it runs on a full Redis (as the cleaner does).
  delete: typedFunction({
    name: 'tbCounterDelete',
    handler: 'delete',
    flags: ['allow-oom'],
    numberOfKeys: 'dynamic',
    build: (call: CounterCall) => ({ keys: counterKeys(call), args: [call.name, ...call.precisionsSec] }),
    /** Index entries and hashes removed. */
    decode: (raw) => intReply('tbCounterDelete', raw),
  }),

  clean: typedFunction({
    name: 'tbCounterClean',
    handler: 'clean',
    flags: ['allow-oom'],
    numberOfKeys: 1,
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
      args: [call.nowMs, call.samples, call.pass, call.cursor, call.pageSize],
    }),
    decode: (raw): CleanPage => {
      const reply = new Reply('tbCounterClean', raw).expectLength(6);
      return {
        next: reply.string(0),
        visited: reply.int(1),
        due: reply.int(2),
        slicesRemoved: reply.int(3),
        entriesRemoved: reply.int(4),
        namesRemoved: reply.int(5),
      };
    },
  }),
};

/**
 * tb_counters: the counters' functions, loaded once per node and called by FCALL / FCALL_RO like
 * tb_ranking. Its version is derived from its assembled Lua (keys_lib and idem_lib included).
 */
export const COUNTERS = defineLibrary({
  name: 'tb_counters',
  modules: [KEYS_LIBRARY, IDEM_LIBRARY, ...handlerModules(join(__dirname, 'scripts'), COUNTER_FUNCTIONS)],
  functions: COUNTER_FUNCTIONS,
});
