import { join } from 'node:path';
import { callArgs, headerArgs, CallHeader, recordArgs, RecordOf } from '../src/redis/function-args';
import { defineLibrary, functionSet, typedFunction } from '../src/redis/function-library';
import { intReply, NamedReply, Reply } from '../src/redis/replies';

/** named_echo's contract: its args after the header and its reply fields (emitted as CALLS.named_echo). */
export const NAMED_ECHO = { args: ['item', 'amount', 'leave_out'], reply: ['item', 'doubled', 'windows'] } as const;

/** The per-request record of records_echo, named once: the library emits it for read_records. */
export const REQUEST_FIELDS = ['item', 'amount', 'key'] as const;
export type TestRequest = RecordOf<typeof REQUEST_FIELDS>;

const dir = join(__dirname, 'functions');

/** What header_echo answers: the header as read_header parsed it. */
export interface EchoedHeader {
  version: string;
  nowMs: number;
  nowSec: number;
  budget: number;
  windows: number[][];
}

/** A module of one comment: added to testLibrary, it makes a second version of the same functions. */
export const SECOND_VERSION_MODULE = join(dir, 'second_version.lua');

/** The functions that take nothing or the call's header: none, the header alone, a loop over it, its echo. */
const HEADER_FUNCTIONS = {
  nothing: typedFunction({
    flags: ['no-writes'],
    numberOfKeys: 0,
    build: () => ({ keys: [], args: [] }),
    decode: (raw) => intReply('nothing', raw),
  }),
  headerOnly: typedFunction({
    flags: ['no-writes'],
    numberOfKeys: 0,
    build: (header: CallHeader) => ({ keys: [], args: headerArgs(header) }),
    decode: (raw) => intReply('header_only', raw),
  }),
  headerLoop: typedFunction({
    flags: ['no-writes'],
    numberOfKeys: 0,
    build: (call: { times: number; header: CallHeader }) => ({
      keys: [],
      args: [call.times, ...headerArgs(call.header)],
    }),
    decode: (raw) => intReply('header_loop', raw),
  }),
  headerEcho: typedFunction({
    flags: ['no-writes'],
    numberOfKeys: 0,
    build: (header: CallHeader) => ({ keys: [], args: headerArgs(header) }),
    decode: (raw): EchoedHeader => {
      const reply = new Reply('header_echo', raw).expectLength(5, true);
      const windows: number[][] = [];
      for (let w = 0; w < reply.int(4); w++) windows.push([0, 1, 2, 3].map((i) => reply.int(5 + 4 * w + i)));
      return {
        version: reply.string(0),
        nowMs: reply.int(1),
        nowSec: reply.int(2),
        budget: reply.int(3),
        windows,
      };
    },
  }),
};

/** Records, a key's value (added to and read), a write flagged no-writes, and a failure. */
const KEY_FUNCTIONS = {
  recordsEcho: typedFunction({
    flags: ['no-writes'],
    numberOfKeys: 0,
    build: (call: { header: CallHeader; requests: TestRequest[] }) => ({
      keys: [],
      args: [...headerArgs(call.header), ...recordArgs(REQUEST_FIELDS, call.requests)],
    }),
    decode: (raw) => {
      const reply = new Reply('records_echo', raw);
      const rows: string[][] = [];
      for (let r = 0; r < reply.int(0); r++) rows.push([0, 1, 2].map((i) => reply.string(1 + 3 * r + i)));
      return rows;
    },
  }),
  add: typedFunction({
    numberOfKeys: 1,
    build: (call: { key: string; amount: number; header: CallHeader }) => ({
      keys: [call.key],
      args: [...headerArgs(call.header), call.amount],
    }),
    decode: (raw) => intReply('add', raw),
  }),
  get: typedFunction({
    flags: ['no-writes'],
    numberOfKeys: 1,
    build: (key: string) => ({ keys: [key], args: [] }),
    decode: (raw) => intReply('get', raw),
  }),
  sneakyWrite: typedFunction({
    flags: ['no-writes'],
    numberOfKeys: 1,
    build: (key: string) => ({ keys: [key], args: [] }),
    decode: (raw) => raw,
  }),
  fail: typedFunction({
    numberOfKeys: 0,
    build: () => ({ keys: [], args: [] }),
    decode: (raw) => raw,
  }),
};

/** The named contract's echo and a call counter. */
const NAMED_FUNCTIONS = {
  namedEcho: typedFunction({
    flags: ['no-writes'],
    numberOfKeys: 0,
    contract: NAMED_ECHO,
    build: (call: { header: CallHeader; item: string; amount: number; leaveOut?: string }) => ({
      keys: [],
      args: callArgs(call.header, NAMED_ECHO.args, { ...call, leave_out: call.leaveOut }),
    }),
    decode: (raw) => {
      const reply = new NamedReply('named_echo', NAMED_ECHO.reply, raw);
      return { item: reply.string('item'), doubled: reply.int('doubled'), windows: reply.int('windows') };
    },
  }),
  countCalls: typedFunction({
    numberOfKeys: 0,
    build: () => ({ keys: [], args: [] }),
    decode: (raw) => intReply('count_calls', raw),
  }),
};

/**
 * A small library of the tests' own (and the benchmark's): shared code in one module, registered
 * functions in another, reads flagged no-writes. `extraModules` (SECOND_VERSION_MODULE) change its
 * source, hence its version: a test loads two versions side by side.
 */
export function testLibrary(extraModules: readonly string[] = []) {
  return defineLibrary({
    name: 'tb_fntest',
    modules: [join(dir, 'shared.lua'), ...extraModules, join(dir, 'calls.lua')],
    records: { request: REQUEST_FIELDS },
    functions: functionSet('fnTest', { ...HEADER_FUNCTIONS, ...KEY_FUNCTIONS, ...NAMED_FUNCTIONS }),
  });
}

/** A header with two windows (1 h in minutes, 7 d in days) at `nowMs`. */
export function twoWindowHeader(nowMs: number): CallHeader {
  return {
    version: 'v1',
    nowMs,
    budget: 64,
    windows: [
      { periodSec: 3600, intervalSec: 60, createdAtMs: 1_000, originSec: 0 },
      { periodSec: 604_800, intervalSec: 86_400, createdAtMs: 2_000, originSec: 0 },
    ],
  };
}
