/**
 * The hot calls of tb_counters and tb_stats as the tree at `root` builds them (its own *.functions.ts,
 * so a commit from before a change of their arguments builds its own): for bench/library-instructions.ts,
 * which runs this for an older commit in a worktree of its own (`node -e`, JSON on stdout) and for
 * today's tree. Every call is made from the same domain values at one fixed time, so each library
 * does the same work.
 */
import { join } from 'node:path';
import type { ScriptArg } from '../src/redis/scripts';

/** One call as FCALL takes it, without the function's name. */
export type FcallArgs = [number, ...ScriptArg[]];

export interface LibraryCase {
  label: string;
  handler: string;
  /** Calls to send in turn (distinct counters or pairs, each live after the first round). */
  calls: FcallArgs[];
}

export interface LibraryCalls {
  /** Each library's assembled source, by feature (tb_counters, tb_stats). */
  sources: Record<string, string>;
  /** Each library's name as assembled, by feature. */
  names: Record<string, string>;
  cases: Array<LibraryCase & { feature: string }>;
}

const NAMES = 64;
const PRECISIONS_SEC = [60, 3600, 86_400];
const SAMPLES = 120;

interface Definition {
  numberOfKeys: number | 'dynamic';
  handler: string;
  build(input: unknown): { keys: string[]; args: ScriptArg[] };
}

function fcall(fn: Definition, input: unknown): FcallArgs {
  const call = fn.build(input);
  return [call.keys.length, ...call.keys, ...call.args];
}

/** Counters: an increment (no idempotency key: a single Redis) and a read of the minute precision. */
function counterCases(root: string, prefix: string, nowMs: number): LibraryCase[] {
  /* eslint-disable @typescript-eslint/no-require-imports -- the modules of another tree, by path */
  const { COUNTERS } = require(join(root, 'src/counters/counters.functions'));
  const { CounterKeys } = require(join(root, 'src/counters/counter-keys'));
  /* eslint-enable @typescript-eslint/no-require-imports */
  const keys = new CounterKeys(prefix, 4);
  const nowSec = Math.floor(nowMs / 1000);
  const counter = (n: number) => ({ keys, name: `c${n}`, precisionsSec: PRECISIONS_SEC, samples: SAMPLES });
  const names = Array.from({ length: NAMES }, (_, n) => n);
  const fn = COUNTERS.functions;
  return [
    {
      label: 'counter increment',
      handler: fn.increment.handler,
      calls: names.map((n) =>
        fcall(fn.increment, { ...counter(n), nowMs, atSec: nowSec, count: 1, newCounters: -1, bucketCap: 0 }),
      ),
    },
    {
      label: 'counter read (minute)',
      handler: fn.read.handler,
      calls: names.map((n) =>
        fcall(fn.read, { ...counter(n), precisionSec: 60, nowMs, fromSec: nowSec - 3600, toSec: nowSec }),
      ),
    },
  ];
}

/** What the access-time flush merges into a pair: three values (1, 2, 3) and their histogram. */
const MERGED_MOMENTS = { count: 3, sum: 6, sumsq: 14, min: 1, max: 3, mean: 2, m2: 2 };
const MERGED_HISTOGRAM = new Map([
  ['p1', 1],
  ['p3', 2],
]);

/** Stats: a pair's admission to the index, a recorded value and a merged batch, as POST .../stats and the access-time flush send them. */
function statsCases(root: string, prefix: string, nowMs: number): LibraryCase[] {
  /* eslint-disable @typescript-eslint/no-require-imports -- the modules of another tree, by path */
  const { STATS } = require(join(root, 'src/stats/stats.functions'));
  const { StatsKeys } = require(join(root, 'src/stats/stats-keys'));
  /* eslint-enable @typescript-eslint/no-require-imports */
  const keys = new StatsKeys(prefix);
  const hourStart = Math.floor(nowMs / 3_600_000) * 3600;
  const pair = (n: number) => ({ keys, context: `route${n}`, type: 'ms' });
  const names = Array.from({ length: NAMES }, (_, n) => n);
  const fn = STATS.functions;
  const admit = { keys, hourStart, oldestLiveHour: hourStart - 3600, cap: 0, newPairs: -1 };
  return [
    {
      label: 'stats index admit',
      handler: fn.indexAdmit.handler,
      calls: names.map((n) => fcall(fn.indexAdmit, { ...admit, member: `route${n}\tms` })),
    },
    {
      label: 'stats record',
      handler: fn.record.handler,
      calls: names.map((n) =>
        fcall(fn.record, { ...pair(n), nowMs, hourStart, value: 1 + (n % 7), histogramField: 'p3', apply: true }),
      ),
    },
    {
      label: 'stats merge',
      handler: fn.merge.handler,
      calls: names.map((n) =>
        fcall(fn.merge, { ...pair(n), nowMs, hourStart, moments: MERGED_MOMENTS, histogram: MERGED_HISTOGRAM }),
      ),
    },
  ];
}

export function libraryCalls(root: string, prefix: string, nowMs: number): LibraryCalls {
  /* eslint-disable @typescript-eslint/no-require-imports -- the modules of another tree, by path */
  const { COUNTERS } = require(join(root, 'src/counters/counters.functions'));
  const { STATS } = require(join(root, 'src/stats/stats.functions'));
  /* eslint-enable @typescript-eslint/no-require-imports */
  const libraries = { tb_counters: COUNTERS.library, tb_stats: STATS.library };
  return {
    sources: { tb_counters: libraries.tb_counters.source, tb_stats: libraries.tb_stats.source },
    names: { tb_counters: libraries.tb_counters.name, tb_stats: libraries.tb_stats.name },
    cases: [
      ...counterCases(root, prefix, nowMs).map((c) => ({ ...c, feature: 'tb_counters' })),
      ...statsCases(root, prefix, nowMs).map((c) => ({ ...c, feature: 'tb_stats' })),
    ],
  };
}
