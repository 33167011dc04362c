/** Parts timing the ranking library's calls inside Redis, with no HTTP. */
import type { BenchPart } from './part';

export const RANKING_FUNCTIONS_PARTS: BenchPart[] = [
  {
    name: 'redis',
    capability: 'ranking-functions',
    measures: 'calls/s of the ranking functions, 64 calls in flight, no HTTP',
    knobs: [],
    byDefault: true,
    run: async (context) => (await import('../redis-parts')).redisBench((await context.sharedRedis()).redis),
  },
  {
    name: 'functions-ranking',
    capability: 'ranking-functions',
    measures: 'increment and top-10 read, now against the library `BENCH_BEFORE_REF` built',
    knobs: ['BENCH_FN_ROUNDS', 'BENCH_FN_CALLS', 'BENCH_BEFORE_REF'],
    byDefault: true,
    run: async () => (await import('../functions-ranking')).functionsRankingBench(),
  },
  {
    name: 'functions',
    capability: 'ranking-functions',
    measures: "a function's fixed cost, header parse, floors",
    knobs: ['BENCH_FN_ROUNDS', 'BENCH_FN_CALLS', 'BENCH_HEADER_REF'],
    byDefault: true,
    run: async () => (await import('../functions')).functionsFixedCostBench(),
  },
  {
    name: 'lua-versions',
    capability: 'ranking-functions',
    measures: "this checkout's `tb_ranking` against another checkout's, same server",
    knobs: ['BENCH_BASE_DIR (required)', 'BENCH_LUA_ROUNDS', 'BENCH_LUA_INCREMENTS_ONLY', 'BENCH_BATCH_ENTRIES'],
    run: async () => (await import('../lua-versions')).luaVersionsBench(),
  },
  {
    name: 'increment-parts',
    capability: 'ranking-functions',
    measures: "an increment's cost part by part (early-return copies)",
    knobs: ['BENCH_PARTS_ROUNDS', 'BENCH_PARTS_QUOTA=1'],
    run: async () => (await import('../increment-parts')).incrementPartsBench(),
  },
  {
    name: 'coalesced-increment',
    capability: 'ranking-functions',
    measures: 'a coalesced call per request against the hand-rolled script',
    knobs: ['BENCH_COALESCED', 'BENCH_COALESCED_ROUNDS', 'BENCH_COALESCED_PIPELINED'],
    run: async () => (await import('../coalesced-increment')).coalescedIncrementBench(),
  },
  {
    name: 'batch-entries',
    capability: 'ranking-functions',
    measures: "a batch's Lua per entry against the data model's floor",
    knobs: ['BENCH_BATCH_ENTRIES', 'BENCH_BATCH_ROUNDS'],
    run: async () => (await import('../batch-entries')).batchEntriesBench(),
  },
  {
    name: 'write-cost',
    capability: 'ranking-functions',
    measures: 'Redis µs per write-cost unit (issue #45), figures in docs/security.md',
    knobs: ['BENCH_WRITE_COST_ROUNDS', 'WRITE_COST_PER_CALL', 'BENCH_REDIS_REALTIME=1'],
    run: async () => (await import('../write-cost')).writeCostBench(),
  },
  {
    name: 'actors-write',
    capability: 'ranking-functions',
    measures: 'what actors add to an increment, against a baseline checkout',
    knobs: ['BENCH_BASELINE_DIR (required)'],
    run: async () => (await import('../actors-write')).actorsWriteBench(),
  },
];
