/** Parts measuring scale-out: Cluster masters, sharded signals, boards at rest, stream ingest. */
import type { BenchPart } from './part';

export const SCALE_OUT_PARTS: BenchPart[] = [
  {
    name: 'signals',
    capability: 'scale-out',
    measures: "signals on a 3-master Cluster's sharded boards",
    knobs: ['SIGNAL_SHARDS'],
    byDefault: true,
    run: async (context) =>
      (await import('../signals-sharded')).signalsShardedBench(context.repeats, Math.max(1, context.durationSec / 2)),
  },
  {
    name: 'cluster',
    capability: 'scale-out',
    measures: 'increments on a local 3-master Cluster, plain and sharded boards',
    knobs: [],
    byDefault: true,
    run: async () => (await import('../redis-parts')).clusterBench(),
  },
  {
    name: 'idle',
    capability: 'scale-out',
    measures: 'boards at rest and their memory; boards falling due at once',
    knobs: ['IDLE_BENCH_BOARDS', 'IDLE_BENCH_SEC', 'IDLE_BENCH_DUE', 'IDLE_BENCH_SEED', 'IDLE_BENCH_SEED_PROCESSES'],
    byDefault: true,
    run: async () => (await import('../idle-boards')).idleBoardsBench(),
  },
  {
    name: 'masters',
    capability: 'scale-out',
    measures: 'events/s and CPU per event over 1, 2, 3 Cluster masters',
    knobs: ['MASTERS_BENCH_MAX', 'MASTERS_BENCH_SHARDS', 'MASTERS_BENCH_SEC', 'MASTERS_BENCH_BACKLOG'],
    byDefault: true,
    run: async () => (await import('../masters')).mastersBench(),
  },
  {
    name: 'ingest',
    capability: 'scale-out',
    measures: 'stream ingest: backlog drain, lag at a steady rate, HTTP beside it',
    knobs: [
      'BENCH_INGEST_BACKLOG',
      'BENCH_INGEST_RATE',
      'BENCH_INGEST_SECONDS',
      'BENCH_INGEST_ITEMS',
      'BENCH_INGEST_WINDOWS',
      'BENCH_INGEST_BATCH',
      'BENCH_INGEST_IN_FLIGHT',
      'BENCH_INGEST_DRAIN_HTTP',
      'BENCH_INGEST_HASH_LISTPACK',
      'BENCH_INGEST_PROFILE',
      'BENCH_REDIS_REALTIME=1',
    ],
    run: async () => (await import('../ingest')).ingestBench(),
  },
];
