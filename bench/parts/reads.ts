/** Parts measuring bounded reads: sharded and fan-out reads, each route's worst request, spans, history. */
import type { BenchPart } from './part';

export const READS_PARTS: BenchPart[] = [
  {
    name: 'shards',
    capability: 'reads',
    measures: 'Redis time per request on a 64-shard board',
    knobs: ['SHARDED_BENCH_ITEMS_PER_SHARD'],
    byDefault: true,
    run: async (context) =>
      (await import('../sharded-cost')).shardedCostBench((await context.sharedRedis()).url, context.repeats),
  },
  {
    name: 'worst',
    capability: 'reads',
    measures: "the Redis cost of each route's worst request on reference data",
    knobs: ['WORST_BENCH_ITEMS'],
    byDefault: true,
    run: async (context) => (await import('../worst-requests')).worstRequestsBench((await context.sharedRedis()).url),
  },
  {
    name: 'history',
    capability: 'reads',
    measures: 'bytes per stored snapshot row',
    knobs: [],
    byDefault: true,
    run: async (context) => {
      const { AppConfig } = await import('../../src/common/config');
      const { historyMemoryBench } = await import('../history');
      await historyMemoryBench((await context.sharedRedis()).redis, new AppConfig().EXPIRE_CHUNK);
    },
  },
  {
    name: 'stream',
    capability: 'reads',
    measures: '1 000 SSE clients under load',
    knobs: ['STREAM_BENCH_CLIENTS', 'STREAM_BENCH_RATE', 'STREAM_BENCH_SEC'],
    byDefault: true,
    run: async () => (await import('../history')).streamBench(),
  },
  {
    name: 'fanout-reads',
    capability: 'reads',
    measures: 'fan-out reads (issue #45), figures in docs/security.md',
    knobs: ['FANOUT_ITEMS_PER_SHARD', 'FANOUT_SPAN_ITEMS_PER_HOUR', 'FANOUT_SKIP', 'FANOUT_FIFO=1'],
    run: async () => (await import('../fanout-reads')).fanoutReadsBench(),
  },
  {
    name: 'spans',
    capability: 'reads',
    measures: '`?span=` reads on a 100 000-item board',
    knobs: [],
    run: async () => (await import('../spans')).spansBench(),
  },
];
