/**
 * Parts counting the instructions redis-server executes under callgrind (startCallgrindRedis): figures
 * that do not move with the machine's load. Run one at a time: each keeps a core busy for minutes.
 */
import type { BenchPart } from './part';

export const INSTRUCTIONS_PARTS: BenchPart[] = [
  {
    name: 'redis-instructions',
    capability: 'instructions',
    measures: 'Redis instructions per request: increment, batch, top-10, against the hand-rolled script',
    knobs: ['INSTR_CALLS', 'INSTR_PARTS=1', 'INSTR_CACHE=1', 'INSTR_PIPELINED', 'INSTR_KEEP=1'],
    run: async () => (await import('../redis-instructions')).redisInstructionsBench(),
  },
  {
    name: 'functions-instructions',
    capability: 'instructions',
    measures: 'an increment and a top-10 read per call, against the library each of `INSTR_REFS` built',
    knobs: ['INSTR_REFS', 'INSTR_CALLS', 'INSTR_ROUNDS', 'INSTR_CONTROL=1'],
    run: async () => (await import('../functions-instructions')).functionsInstructionsBench(),
  },
  {
    name: 'library-instructions',
    capability: 'instructions',
    measures: "tb_counters' and tb_stats' hot calls, against the libraries each of `INSTR_REFS` built",
    knobs: ['INSTR_REFS', 'INSTR_CASES', 'INSTR_CALLS', 'INSTR_ROUNDS', 'INSTR_CONTROL=1'],
    run: async () => (await import('../library-instructions')).libraryInstructionsBench(),
  },
  {
    name: 'write-instructions',
    capability: 'instructions',
    measures: 'the writes of the board of every option (worst-case rows of 12–18 ms a call)',
    knobs: [
      'WRITE_BENCH_ROWS',
      'WRITE_BENCH_ATTEMPTS',
      'WRITE_BENCH_CUTS',
      'WRITE_BENCH_ARGV',
      'WRITE_BENCH_FCALL_ONLY=1',
    ],
    run: async () => (await import('../write-instructions')).writeInstructionsBench(),
  },
  {
    name: 'admin-step-instructions',
    capability: 'instructions',
    measures: "the admin steps of the worst-case harness's board of every option",
    knobs: ['ADMIN_BENCH_METRICS', 'ADMIN_BENCH_MOST', 'ADMIN_BENCH_ALL=1'],
    run: async () => (await import('../admin-step-instructions')).adminStepInstructionsBench(),
  },
  {
    name: 'expire-instructions',
    capability: 'instructions',
    measures: "the scheduler's expire calls on the worst-case harness's crossing board",
    knobs: [
      'EXPIRE_BENCH_ITEMS',
      'EXPIRE_BENCH_BOARD',
      'EXPIRE_BENCH_PASSES',
      'EXPIRE_BENCH_KEEP',
      'EXPIRE_BENCH_ALL=1',
    ],
    run: async () => (await import('../expire-instructions')).expireInstructionsBench(),
  },
  {
    name: 'fanout-call-instructions',
    capability: 'instructions',
    measures: "a 64-shard board's fan-out reads, call by call",
    knobs: [
      'FANOUT_BENCH_BOARD',
      'FANOUT_BENCH_ITEMS',
      'FANOUT_BENCH_CALLS',
      'FANOUT_BENCH_BATCH',
      'FANOUT_BENCH_COLD_MS',
      'FANOUT_BENCH_ONLY',
    ],
    run: async () => (await import('../fanout-call-instructions')).fanoutCallInstructionsBench(),
  },
  {
    name: 'lookup-instructions',
    capability: 'instructions',
    measures: 'a lookup per call and per id on a moderated board',
    knobs: ['LOOKUP_BENCH_IDS', 'LOOKUP_BENCH_SHARDS'],
    run: async () => (await import('../lookup-instructions')).lookupInstructionsBench(),
  },
  {
    name: 'moderated-read-instructions',
    capability: 'instructions',
    measures: 'the reads of the board holding the most moderation',
    knobs: ['READ_BENCH_ROWS', 'READ_BENCH_ATTEMPTS'],
    run: async () => (await import('../moderated-read-instructions')).moderatedReadInstructionsBench(),
  },
  {
    name: 'snapshot-crossing-instructions',
    capability: 'instructions',
    measures: "the call that crosses a one-shard board's snapshot boundary",
    knobs: ['INSTR_KEEP=1'],
    run: async () => (await import('../snapshot-crossing-instructions')).snapshotCrossingInstructionsBench(),
  },
  {
    name: 'snapshot-read-instructions',
    capability: 'instructions',
    measures: "a window's first read after a snapshot boundary",
    knobs: [],
    run: async () => (await import('../snapshot-read-instructions')).snapshotReadInstructionsBench(),
  },
  {
    name: 'split-call-instructions',
    capability: 'instructions',
    measures: 'two reads and writes the worst-case harness found over 5 ms a call, call by call',
    knobs: ['SPLIT_BENCH_ONLY'],
    run: async () => (await import('../split-call-instructions')).splitCallInstructionsBench(),
  },
  {
    name: 'split-calls-instructions',
    capability: 'instructions',
    measures: 'reads that issue #45 split into calls',
    knobs: [],
    run: async () => (await import('../split-calls-instructions')).splitCallsInstructionsBench(),
  },
  {
    name: 'tail-page-instructions',
    capability: 'instructions',
    measures: "a one-shard board's deepest tail page, call by call",
    knobs: [],
    run: async () => (await import('../tail-page-instructions')).tailPageInstructionsBench(),
  },
  {
    name: 'group-history-instructions',
    capability: 'instructions',
    measures: "a group board's history over a member board of 64 shards",
    knobs: [],
    run: async () => (await import('../group-history-instructions')).groupHistoryInstructionsBench(),
  },
  {
    name: 'group-retract-instructions',
    capability: 'instructions',
    measures: "an item retraction's rewrite of a group board's merged listings, at the documented maxima",
    knobs: [],
    run: async () => (await import('../group-retract-instructions')).groupRetractInstructionsBench(),
  },
];
