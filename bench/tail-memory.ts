/**
 * The bounded tail (`tail` board option) against exact slots, in Redis memory: a Wikipedia-shaped stream
 * replayed through the ranking service (its functions, no HTTP) into a board with one 24 h window in
 * 1 h slots, once without the option and once with `tail: { exact: 1000, below: 2 }`, each on a private
 * redis-server of its own. Each hour: TAIL_BENCH_DISTINCT items (default 50 000) and TAIL_BENCH_EVENTS
 * events (default 200 000): 70 % of the items once (new ids every hour), the other 30 % (half of them the
 * same ids every hour, half new) twice each plus the rest of the events by Zipf (s = 1) over their ranks.
 * An item's events of an hour go as one batch entry of their sum (the slot hash holds the same field
 * and count either way). After 24 h + 1 minute of the fake clock: INFO used_memory over the empty
 * server's, the board's keys by MEMORY USAGE, and on the tail board how many of the 1 000 best rows
 * answer bound 0 and equal the stream's exact top (score and rank), and what that read costs. The tail
 * board's closed slots are pruned, then packed (tail_pack_lib.lua): "packed slots" is their lists.
 *
 *   npm run bench -- --part tail-memory
 *
 * The tail board's rows are checked against the stream's own exact top (summed here, listed in Redis'
 * order: score, then id bytes descending). TAIL_BENCH_EXACT=0 skips the exact board's run (its memory
 * then goes unmeasured; a loaded machine takes most of the time there).
 *
 * Not part of `npm test`. Memory does not depend on the machine's load.
 */
import { loadavg } from 'node:os';
import { FakeClock } from '../harness/clock';
import { composeRanking, type RankingGraph } from '../harness/compose-ranking';
import { startTestRedis, TestRedis } from '../harness/redis';
import { validateConfig } from '../src/common/config';
import { StandingService } from '../src/ranking/standing/standing.service';
import { RedisFunctions } from '../src/redis/redis-functions';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';

const DISTINCT = Number(process.env.TAIL_BENCH_DISTINCT ?? 50_000);
const EVENTS = Number(process.env.TAIL_BENCH_EVENTS ?? 200_000);
const HOURS = 24;
const EXACT = 1000;
const BELOW = Number(process.env.TAIL_BENCH_BELOW ?? 2);
const RUN_EXACT = process.env.TAIL_BENCH_EXACT !== '0';
const T0_MS = 1_700_002_800_000; // an hour boundary
const HOUR_MS = 3_600_000;
const BATCH = 1000;

/** A seeded PRNG (mulberry32): both runs replay the same stream. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Hour h's items and their event counts. */
function hourOf(hour: number, next: () => number): Map<string, number> {
  const once = Math.round(DISTINCT * 0.7);
  const repeated = DISTINCT - once;
  const counts = new Map<string, number>();
  for (let i = 0; i < once; i++) counts.set(`h${hour}o${i}`, 1);
  const ids = Array.from({ length: repeated }, (_, r) => (r % 2 === 0 ? `p${r}` : `h${hour}r${r}`));
  for (const id of ids) counts.set(id, 2);
  const cumulative: number[] = [];
  let sum = 0;
  for (let r = 0; r < repeated; r++) cumulative.push((sum += 1 / (r + 1)));
  for (let e = EVENTS - once - 2 * repeated; e > 0; e--) {
    const target = next() * sum;
    let [low, high] = [0, repeated - 1];
    while (low < high) {
      const mid = (low + high) >> 1;
      if (cumulative[mid] < target) low = mid + 1;
      else high = mid;
    }
    counts.set(ids[low], counts.get(ids[low])! + 1);
  }
  return counts;
}

interface RunFigures {
  usedBytes: number;
  kinds: Record<string, number>;
  top: Array<{ item: string; score: number; rank: number; bound?: number }>;
  readMs?: number;
}

/** Every key's MEMORY USAGE (the server holds the one board), by kind: slot hashes, results, the tail's filters, the rest. */
async function keyBytes(redis: TestRedis): Promise<Record<string, number>> {
  const kinds: Record<string, number> = {
    slots: 0,
    slotFields: 0,
    packed: 0,
    top: 0,
    topItems: 0,
    filters: 0,
    other: 0,
    keys: 0,
  };
  let cursor = '0';
  do {
    const [nextCursor, found] = await redis.client.scan(cursor, 'COUNT', 1000);
    for (const key of found) {
      const bytes = Number(await redis.client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
      const kind = /:slot:/.test(key)
        ? 'slots'
        : /:top$/.test(key)
          ? 'top'
          : /:tailbf:/.test(key)
            ? 'filters'
            : /:tailpk:/.test(key)
              ? 'packed'
              : 'other';
      kinds[kind] += bytes;
      if (kind === 'slots') kinds.slotFields += await redis.client.hlen(key);
      if (kind === 'top') kinds.topItems += await redis.client.zcard(key);
      kinds.keys++;
    }
    cursor = nextCursor;
  } while (cursor !== '0');
  return kinds;
}

/** The tail run's hour boundaries: the most reads one took to prune and pack, and the most used_memory at a boundary. */
const PRUNING = { mostReads: 0, peakBytes: 0 };

/**
 * The hour's events come here as few batches; as a stream they would be about EVENTS calls, each
 * pruning (then packing) up to EXPIRE_CHUNK closed-slot fields. So, before the next hour, reads of one
 * row (calls pruning as any call does) until the slot before this hour is pruned and packed; answers
 * how many it took.
 */
async function pruneLikeAStream(redis: TestRedis, standing: StandingService, hour: number): Promise<number> {
  if (hour === 0) return 0;
  PRUNING.peakBytes = Math.max(PRUNING.peakBytes, await usedMemory(redis));
  const [, [tailKey]] = await redis.client.scan('0', 'MATCH', '*:day:tail', 'COUNT', 1000);
  const closed = String((T0_MS + (hour - 1) * HOUR_MS) / 1000);
  let calls = 0;
  const settled = async () =>
    tailKey !== undefined &&
    (await redis.client.hget(tailKey, 'upto')) === closed &&
    (await redis.client.hget(`${tailKey}pack`, 'upto')) === closed;
  while (!(await settled())) {
    await standing.tailTop({ name: 'tail', window: 'day', limit: 1 });
    calls++;
  }
  PRUNING.mostReads = Math.max(PRUNING.mostReads, calls);
  return calls;
}

async function usedMemory(redis: TestRedis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.client.info('memory'))![1]);
}

/** The stream's HOURS hours, each in batches spread over its hour; a tail board pruned as a stream's readers would. */
async function streamDay(day: {
  redis: TestRedis;
  graph: RankingGraph;
  clock: FakeClock;
  name: string;
  tail: boolean;
}) {
  const { redis, graph, clock, name, tail } = day;
  const next = random(51);
  for (let hour = 0; hour < HOURS; hour++) {
    const entries = [...hourOf(hour, next)].map(([item, amount]) => ({ item, amount }));
    for (let first = 0; first < entries.length; first += BATCH) {
      clock.setMs(T0_MS + hour * HOUR_MS + Math.floor((first / entries.length) * (HOUR_MS - 60_000)));
      await graph.ranking.incrementBatch(name, entries.slice(first, first + BATCH));
    }
    if (tail) await pruneLikeAStream(redis, graph.module.get(StandingService), hour);
  }
}

async function run(tail: boolean): Promise<RunFigures> {
  const redis = await startTestRedis();
  const clock = new FakeClock(T0_MS);
  const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '20000', QUOTA_NEW_ITEMS: '100000000' });
  const redisService = new RedisService(RedisSettings.from(config), clock);
  await redisService.waitUntilReady(10_000);
  const graph = await composeRanking(redisService, new RedisFunctions(redisService), config, clock);
  try {
    const name = tail ? 'tail' : 'exact';
    const windows = [{ name: 'day', period: '24h', interval: '1h' }];
    await graph.ranking.putBoard({
      name,
      windows,
      shards: 1,
      ...(tail ? { tail: { exact: EXACT, below: BELOW } } : {}),
    });
    const before = await usedMemory(redis);
    await streamDay({ redis, graph, clock, name, tail });
    clock.setMs(T0_MS + (HOURS - 1) * HOUR_MS + HOUR_MS - 1000);
    if (!tail) {
      const page = await graph.ranking.top(name, 'day', 0, EXACT);
      const top = page.items.map((row) => ({ item: row.item, score: row.score, rank: row.rank }));
      return { usedBytes: (await usedMemory(redis)) - before, kinds: await keyBytes(redis), top };
    }
    const standing = graph.module.get(StandingService);
    await standing.tailTop({ name, window: 'day', limit: EXACT }); // the last closed slot pruned, as any call does
    const startedMs = performance.now();
    const answer = await standing.tailTop({ name, window: 'day', limit: EXACT });
    const readMs = performance.now() - startedMs;
    return { usedBytes: (await usedMemory(redis)) - before, kinds: await keyBytes(redis), top: answer.items, readMs };
  } finally {
    await redisService.onApplicationShutdown();
    await redis.stop();
  }
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

/** The stream's exact top EXACT at the end (every hour live), in Redis' order, with competition ranks. */
function streamTop(): Map<string, { score: number; rank: number }> {
  const next = random(51);
  const sums = new Map<string, number>();
  for (let hour = 0; hour < HOURS; hour++)
    for (const [item, count] of hourOf(hour, next)) sums.set(item, (sums.get(item) ?? 0) + count);
  const rows = [...sums].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? 1 : -1)).slice(0, EXACT);
  const top = new Map<string, { score: number; rank: number }>();
  rows.forEach(([item, score], i) => {
    const rank = i > 0 && rows[i - 1][1] === score ? top.get(rows[i - 1][0])!.rank : i + 1;
    top.set(item, { score, rank });
  });
  return top;
}

/** The exact board's top must be the stream's, score and rank. */
function checkExact(exact: RunFigures, truth: ReturnType<typeof streamTop>): void {
  const disagreeing = exact.top.filter(
    (row) => truth.get(row.item)?.score !== row.score || truth.get(row.item)?.rank !== row.rank,
  );
  if (disagreeing.length > 0)
    throw new Error(`the exact board disagrees with the stream on ${disagreeing.length} rows`);
}

export async function tailMemoryBench(): Promise<void> {
  const load = loadavg()[0].toFixed(1);
  const exact = RUN_EXACT ? await run(false) : undefined;
  const tail = await run(true);
  const truth = streamTop();
  if (exact) checkExact(exact, truth);
  const certified = tail.top.filter((row) => row.bound === 0);
  const agreeing = certified.filter((row) => {
    const held = truth.get(row.item);
    return held !== undefined && held.score === row.score && held.rank === row.rank;
  });
  console.log(
    `## Bounded tail: ${DISTINCT.toLocaleString('en')} distinct items/h, ${EVENTS.toLocaleString('en')} events/h, 24 h window in 1 h slots (load ${load})\n`,
  );
  console.log(
    '| board | used_memory growth | slot hashes (fields) | packed slots | results zset (items) | tail filters | other keys | keys |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const [label, figures] of [
    ...(exact ? [['exact slots', exact] as const] : []),
    [`tail { exact: ${EXACT}, below: ${BELOW} }`, tail] as const,
  ]) {
    const k = figures.kinds;
    console.log(
      `| ${label} | ${mb(figures.usedBytes)} MB | ${mb(k.slots)} MB (${k.slotFields}) | ${mb(k.packed)} MB | ${mb(k.top)} MB (${k.topItems}) | ${mb(k.filters)} MB | ${mb(k.other)} MB | ${k.keys} |`,
    );
  }
  console.log(
    `\nTail board: ${certified.length} of its first ${tail.top.length} rows answer bound 0, ${agreeing.length} of them equal the stream's exact top (score and rank); the read of ${EXACT} rows took ${tail.readMs!.toFixed(1)} ms (wall).`,
  );
  const worst = tail.top.reduce((most, row) => Math.max(most, row.bound ?? 0), 0);
  console.log(`Largest bound of a listed row: ${worst}.`);
  console.log(
    `Hour boundaries: at most ${PRUNING.mostReads} reads of one row to prune and pack the closed slot; used_memory peak ${mb(PRUNING.peakBytes)} MB (the server's whole).`,
  );
}
