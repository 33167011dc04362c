/**
 * The fan-out reads of a 64-shard board, counted in Redis instructions call by call (issue #45: which
 * one call of a request is the long one): `npm run bench -- --part fanout-call-instructions`,
 * a few minutes. redis-server runs under callgrind (startCallgrindRedis), which counts the instructions
 * it executes whatever else the machine does. Every function call of the measured request is sent one
 * at a time, the counters dumped after each, so each call's figure is its own (a few thousand
 * instructions of the server's idle loop between two calls come with it). A board of 64 shards, 2 000
 * items, `ties: first`, a decay view and a window keeping snapshots (FANOUT_BENCH_ITEMS for another size;
 * FANOUT_BENCH_BATCH the entries a seeding write carries; FANOUT_BENCH_ONLY=<regular expression> measures the requests whose
 * label holds it, FANOUT_BENCH_CALLS=1 prints every call's own instructions, FANOUT_BENCH_COLD_MS=60000 measures
 * each read's first run a minute after the last). The segments page reads its own board (SEGMENT_BOARD), seeded
 * only when its row is measured. A call's own instructions leave out serverCron's
 * (cronInstructionsOf), which a dump holds as often as the wall time between two dumps lets it run.
 */
import { type RankingGraph } from '../harness/compose-ranking';
import { type FakeClock } from '../harness/clock';
import { BOARDS } from '../harness/worst-case/boards';
import { RedisFunctions } from '../src/redis/redis-functions';
import { execFileSync } from 'node:child_process';
import { dumpCounts, type Callgrind } from './redis-instructions';
import { withCallgrindRanking } from './callgrind-ranking';

const ITEMS = Number(process.env.FANOUT_BENCH_ITEMS ?? 2000);
const SHARDS = 64;
const MINUTE_MS = 60_000;
const BOARD = 'fan';
/** The harness's 64-shard board of every option (less actors and unique views), ITEMS items in SEGMENTS segments. */
const SEGMENT_BOARD = 'fanseg';
const SEGMENTS = 100;
const SEGMENTS_ROW = 'page of 100 segments';
const BATCH = Number(process.env.FANOUT_BENCH_BATCH ?? 500);
/** FANOUT_BENCH_BOARD=wc-shards: the worst-case harness's 64-shard board of every option instead (but actors). */
const EVERY_OPTION = process.env.FANOUT_BENCH_BOARD === 'wc-shards';

/** Millions of instructions, two decimals. */
const millions = (instructions: number) => (instructions / 1e6).toFixed(2);

/** Each function call's name and instructions, while `measuring` is on (`ownInstructions`: serverCron's left out). */
export interface CallLog {
  measuring: boolean;
  calls: Array<{ name: string; instructions: number; ownInstructions: number }>;
}

/**
 * The instructions of a dump's serverCron: Redis's timer (10 times a second of wall time, its memory
 * statistics most of it) runs between the bench's dumps as often as valgrind's slowness and the
 * machine's load make them last (0.12-0.3 M a dump), whatever the call sent: not the call's own work.
 */
function cronInstructionsOf(file: string): number {
  const listing = execFileSync('callgrind_annotate', ['--inclusive=yes', file], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const found = /^\s*([\d,]+) \([^)]*\)\s+\S*:serverCron \[/m.exec(listing);
  return found ? Number(found[1].replace(/,/g, '')) : 0;
}

/** Sends every function call after the last one's reply and dumps the counters after each. */
export function serializeCalls(server: Callgrind, log: CallLog): void {
  const call = RedisFunctions.prototype.call;
  let chain: Promise<unknown> = Promise.resolve();
  RedisFunctions.prototype.call = function serialized<In, Out>(
    this: RedisFunctions,
    fn: Parameters<typeof call<In, Out>>[0],
    input: In,
  ): Promise<Out> {
    if (!log.measuring) return call.call(this, fn, input) as Promise<Out>;
    const sent = chain.then(async () => {
      dumpCounts(server);
      try {
        return (await call.call(this, fn, input)) as Out;
      } finally {
        const { counts, file } = dumpCounts(server);
        log.calls.push({
          name: fn.name,
          instructions: counts.Ir,
          ownInstructions: counts.Ir - cronInstructionsOf(file),
        });
      }
    });
    chain = sent.catch(() => undefined);
    return sent;
  };
}

/**
 * Prints a row of `read`'s calls (its second run): how many, all instructions, the longest and its
 * function. With FANOUT_BENCH_COLD_MS, its first run instead, that long after the last read (the first
 * read after a boundary takes the snapshots due, a decay view's rebase moves, expired slots drain).
 */
export async function measure(
  log: CallLog,
  label: string,
  read: () => Promise<unknown>,
  clock: FakeClock,
): Promise<void> {
  const coldMs = Number(process.env.FANOUT_BENCH_COLD_MS ?? 0);
  if (coldMs > 0) clock.advanceMs(coldMs);
  else await read();
  log.calls = [];
  log.measuring = true;
  try {
    await read();
  } finally {
    log.measuring = false;
  }
  const total = log.calls.reduce((sum, call) => sum + call.instructions, 0);
  const own = log.calls.reduce((sum, call) => sum + call.ownInstructions, 0);
  const longest = log.calls.reduce((max, call) => (call.instructions > max.instructions ? call : max), log.calls[0]);
  const names = [...new Set(log.calls.map((call) => call.name))].join(', ');
  console.log(
    `| ${label} | ${log.calls.length} (${names}) | ${millions(total)} | ${millions(own)} | ${millions(longest.instructions)} (${longest.name}) |`,
  );
  if (process.env.FANOUT_BENCH_CALLS === '1')
    console.log(log.calls.map((call) => `${call.name} ${millions(call.ownInstructions)}`).join('; '));
}

/** The harness's board less its actors and unique views (an actor's config takes the HTTP body's form). */
function everyOption() {
  const { actors: _, ...every } = BOARDS['wc-shards'];
  return { ...every, views: every.views.filter((view) => view.mode !== 'unique') };
}

/** SEGMENT_BOARD: every item once, item n in segment n % SEGMENTS, then a boundary later. */
async function seedSegments(graph: RankingGraph, clock: FakeClock): Promise<void> {
  await graph.ranking.putBoard({
    name: SEGMENT_BOARD,
    ...everyOption(),
    segmentsMax: BOARDS['wc-shards'].segments.max,
  } as Parameters<RankingGraph['ranking']['putBoard']>[0]);
  const entries = Array.from({ length: ITEMS }, (_, n) => ({
    item: `i${n}`,
    amount: 1 + n,
    segments: [`s${n % SEGMENTS}`],
  }));
  while (entries.length > 0) await graph.ranking.incrementBatch(SEGMENT_BOARD, entries.splice(0, BATCH));
  clock.advanceMs(MINUTE_MS);
}

async function seed(graph: RankingGraph, clock: FakeClock): Promise<void> {
  const windows = [{ name: 'm', period: 3600, interval: 60, snapshots: { keep: 3, top: 1000 } }];
  const views = [{ name: 'fading', mode: 'decay' as const, window: 'm', halfLife: '30m' }];
  const counted = everyOption();
  const config = EVERY_OPTION ? counted : { windows, views, ties: 'first' as const, shards: SHARDS };
  await graph.ranking.putBoard({ name: BOARD, ...config } as Parameters<RankingGraph['ranking']['putBoard']>[0]);
  // Two rounds a boundary apart (the snapshot keeps previous ranks), in batches of BATCH entries.
  for (const factor of [3, 4]) {
    const entries = Array.from({ length: ITEMS }, (_, n) => ({ item: `i${n}`, amount: 1 + ((n * factor) % 400) }));
    while (entries.length > 0) await graph.ranking.incrementBatch(BOARD, entries.splice(0, BATCH));
    clock.advanceMs(MINUTE_MS);
    await graph.ranking.top(BOARD, 'm', 0, 1);
  }
}

export async function fanoutCallInstructionsBench(): Promise<void> {
  // The board of every option weighs a write past the default bound (the harness stores it the same way).
  const settings = { WRITE_COST_PER_CALL: '1000000' };
  await withCallgrindRanking(
    1_699_999_980_000,
    async ({ server, graph, clock }) => {
      const log: CallLog = { measuring: false, calls: [] };
      serializeCalls(server, log);
      const only = process.env.FANOUT_BENCH_ONLY ?? '';
      await seed(graph, clock);
      if (new RegExp(only).test(SEGMENTS_ROW)) await seedSegments(graph, clock);
      const lowest = (await graph.ranking.top(BOARD, 'fading', Math.floor(ITEMS * 0.45), 1)).items[0].item;
      console.log('| request (64 shards) | calls | M instructions | without serverCron, M | longest call, M |');
      console.log('| --- | ---: | ---: | ---: | ---: |');
      const items = Array.from({ length: 31 }, (_, n) => `i${(n * 7) % ITEMS}`);
      const rows: Array<[string, () => Promise<unknown>]> = [
        ['around radius 100 on the view', () => graph.ranking.around(BOARD, 'fading', lowest, 100)],
        ['top 1000 of the window', () => graph.ranking.top(BOARD, 'm', 0, 1000)],
        ['top 100 of the view', () => graph.ranking.top(BOARD, 'fading', 0, 100)],
        ['distribution of 100 buckets', () => graph.standing.distribution({ name: BOARD, window: 'm', buckets: 100 })],
        ['history of an item', () => graph.ranking.itemHistory(BOARD, 'm', lowest, undefined, undefined)],
        ['increment of an existing item', () => graph.ranking.increment(BOARD, 'i5', 1)],
        ['rank of the lowest item', () => graph.ranking.item(BOARD, 'm', lowest)],
        [
          'lookup of 31 ids, data',
          () => graph.lookup.lookup({ name: BOARD, window: 'm', items, relative: false, withData: true }),
        ],
        [SEGMENTS_ROW, () => graph.ranking.listSegments(SEGMENT_BOARD, { offset: 0, limit: SEGMENTS })],
      ];
      for (const [label, read] of rows) if (new RegExp(only).test(label)) await measure(log, label, read, clock);
    },
    settings,
  );
}
