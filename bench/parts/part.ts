/**
 * A benchmark as `npm run bench` knows it: a named part of one capability, what it measures and the
 * environment variables that tune it, registered in bench/parts/index.ts. A part's module is loaded only
 * when the part runs, so listing the parts or running one loads nothing else.
 */
import type Redis from 'ioredis';

/** What the service can do that a part measures; the folders of the registry (bench/parts/<capability>.ts). */
export type Capability =
  'hot-path' | 'ranking-functions' | 'instructions' | 'reads' | 'board-options' | 'scale-out' | 'abuse';

export interface BenchContext {
  /** The runner's private redis-server (tb_ranking loaded) and a plain client to it, started on first use. */
  sharedRedis(): Promise<{ url: string; redis: Redis }>;
  /** Measured runs per variant (BENCH_REPEATS, default 5). */
  repeats: number;
  /** Seconds per measured run (BENCH_DURATION_SEC, default 5). */
  durationSec: number;
  /** BENCH_SKIP's names: parts left out of the run, and steps a part leaves out (the `http` part's). */
  skip: ReadonlySet<string>;
}

export interface BenchPart {
  name: string;
  capability: Capability;
  /** What it measures, one line for `--list` and docs/benchmarks.md. */
  measures: string;
  /** The environment variables it reads, beyond BENCH_REPEATS and BENCH_DURATION_SEC. */
  knobs: readonly string[];
  /** In the set `npm run bench` runs when no part is named. */
  byDefault?: true;
  run(context: BenchContext): Promise<void>;
}
