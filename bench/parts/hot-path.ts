/** Parts measuring the service over HTTP: its routes against a floor server, its CPU, heap and tracing. */
import type { BenchPart } from './part';

export const HOT_PATH_PARTS: BenchPart[] = [
  {
    name: 'http',
    capability: 'hot-path',
    measures: 'every route, service against the floor server (autocannon, 50 connections); retry-safe; 4 shards',
    knobs: ['BENCH_SKIP=routes,idempotent,sharded'],
    byDefault: true,
    run: async (context) => (await import('../http')).httpBench(context),
  },
  {
    name: 'coalescing',
    capability: 'hot-path',
    measures: '`WRITE_COALESCE_MS` 0 against 1, one and two instances; increments per call',
    knobs: [],
    byDefault: true,
    run: async (context) => (await import('../coalescing')).coalescingBench(context.repeats),
  },
  {
    name: 'hot-path',
    capability: 'hot-path',
    measures: 'issue #24: the service against the hand-rolled server and its own floor',
    knobs: [
      'HOT_ROUNDS',
      'HOT_ROUND_SEC',
      'HOT_BATCH_ENTRIES',
      'HOT_BEFORE_DIST',
      'HOT_SERVICE_ENV',
      'HOT_CALL_SIZES=1',
      'BENCH_REDIS_REALTIME=1',
    ],
    run: async () => (await import('../hot-path')).hotPathBench(),
  },
  {
    name: 'service-ab',
    capability: 'hot-path',
    measures: 'two builds (or one build, a setting off) alternating on one route',
    knobs: ['AB_BEFORE_DIST', 'AB_BEFORE_ENV', 'AB_ROUTE', 'AB_ROUNDS', 'AB_SEC', 'AB_BATCH_ENTRIES'],
    run: async () => (await import('../service-ab')).serviceAbBench(),
  },
  {
    name: 'profile',
    capability: 'hot-path',
    measures: "a route's CPU profile, grouped by package and function",
    knobs: ['PROFILE_SEC', 'PROFILE_ROUTES', 'PROFILE_SERVER', 'PROFILE_LOG_LEVEL', 'PROFILE_INTERVAL_US'],
    run: async () => (await import('../profile')).profileBench(),
  },
  {
    name: 'allocations',
    capability: 'hot-path',
    measures: 'JS heap bytes allocated per request, the service against the hand-rolled server',
    knobs: ['ALLOC_REQUESTS', 'ALLOC_ROUNDS', 'ALLOC_FRAMES'],
    run: async () => (await import('../allocations')).allocationsBench(),
  },
  {
    name: 'process-instructions',
    capability: 'hot-path',
    measures:
      "the server process's instructions per increment under callgrind (main thread and all threads, each round after a full GC), the service against the hand-rolled server",
    knobs: [
      'PROC_REQUESTS',
      'PROC_WARMUP',
      'PROC_CONNECTIONS',
      'PROC_ROUNDS',
      'PROC_DISTS',
      'PROC_KEEP_DUMPS',
      'PROC_NODE_FLAGS',
    ],
    run: async () => (await import('../process-instructions')).processInstructionsBench(),
  },
  {
    name: 'tracing',
    capability: 'hot-path',
    measures: 'tracing off against on (OTLP to a local sink)',
    knobs: [],
    run: async () => (await import('../tracing')).tracingBench(),
  },
  {
    name: 'client',
    capability: 'hot-path',
    measures: '`@trendboard/client` against raw fetch (needs `npm run client:build`)',
    knobs: ['BENCH_CLIENT_CALLS'],
    run: async () => (await import('../client')).clientBench(),
  },
];
