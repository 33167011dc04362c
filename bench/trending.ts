/**
 * Trending views (BENCH_SKIP=trending leaves both parts out):
 *
 * 1. Write cost: item increments/s through the service (64 in flight) and Redis time per call on a plain
 *    board (1 h / 5 m and 24 h / 1 h windows) and on the same board with a decay, a rising, or all three
 *    views, or with metrics up and down and a wilson and a controversial view of them (the increments
 *    count `up`, which both read), interleaved run by run; the ratio to the plain board is the median
 *    of paired runs.
 * 2. Bursts: a Zipf background of 2 000 items planted over a 24 h baseline with `at`, then 12 simulated
 *    hours in 5-minute steps (a fake clock) with 20 bursts planted at random onsets. After every step the
 *    rising view's top 10 and the plain 1 h sum's top 10 are read: a burst counts as found when it is in
 *    the top 10 within 2 intervals of its onset. A non-burst item in rising's top 10 with a score of at
 *    least ALERT_SCORE is a false positive (counted once per item per simulated hour).
 */
import { SystemClock } from '../src/common/clock';
import { validateConfig } from '../src/common/config';
import { composeRanking } from '../harness/compose-ranking';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { RedisFunctions } from '../src/redis/redis-functions';
import { FakeClock } from '../harness/clock';
import { throughput } from './load';
import { batchesOf, entriesPerCall } from './write-batches';

const WINDOWS = [
  { name: 'hour', period: '1h', interval: '5m' },
  { name: 'day', period: '24h', interval: '1h' },
];
const DECAY = { name: 'fading', mode: 'decay', window: 'hour', halfLife: '15m' };
const RISING = { name: 'rising', mode: 'rising', window: 'hour', baseline: 'day' };
const HOT = { name: 'hot', mode: 'hot', window: 'day' };
const VOTES = { window: 'hour', positive: 'up', negative: 'down' };
const PAIR_VIEWS = [
  { name: 'best', mode: 'wilson', ...VOTES },
  { name: 'argued', mode: 'controversial', ...VOTES },
];
/** The board of the wilson and controversial views (the others have no metrics). */
const PAIR_BOARD = 'wilson and controversial';

const ITEMS = 2000;
const BACKGROUND_PER_HOUR = 20_000;
const BURSTS = 20;
const BURST_PER_STEP = 40;
const BURST_STEPS = 6;
const STEP_SEC = 300;
const SIMULATED_HOURS = 12;
/** A rising score this high is an alert; a non-burst item above it is a false positive. */
const ALERT_SCORE = 25;
const SCHEDULER_PASS = { leaseMs: 30_000, claimBatch: 100 };

export async function trendingBench(redisUrl: string, repeats: number, durationSec: number): Promise<void> {
  await writeCost(redisUrl, repeats, durationSec);
  await bursts(redisUrl);
}

async function serviceOn(redisUrl: string, prefix: string, clock: SystemClock | FakeClock) {
  const config = validateConfig({ REDIS_URL: redisUrl, KEY_PREFIX: prefix, REDIS_COMMAND_TIMEOUT_MS: '60000' });
  const redis = new RedisService(RedisSettings.from(config), clock);
  await redis.waitUntilReady(10_000);
  return { redis, ranking: (await composeRanking(redis, new RedisFunctions(redis), config, clock)).ranking };
}

type Service = Awaited<ReturnType<typeof serviceOn>>;
type Runs = Map<string, Array<{ perSec: number; micros: number }>>;

/** `repeats` rounds over the boards, each a throughput run: increments a second and Redis µs per call. */
async function incrementRuns(run: Service & { names: string[]; repeats: number; durationSec: number }): Promise<Runs> {
  const { redis, ranking, names, repeats, durationSec } = run;
  const runs: Runs = new Map(names.map((name) => [name, []]));
  for (let repeat = 0; repeat < repeats; repeat++) {
    for (const name of names) {
      let n = 0;
      await redis.client.config('RESETSTAT');
      const perSec = await throughput(
        () => ranking.increment(name.replaceAll(' ', '-'), `i${(n++ * 7919) % 10_000}`, 1),
        durationSec,
      );
      const stats = await redis.client.info('commandstats');
      const micros = Number(/cmdstat_fcall:calls=\d+,usec=\d+,usec_per_call=([\d.]+)/.exec(stats)?.[1] ?? NaN);
      runs.get(name)!.push({ perSec, micros });
    }
  }
  return runs;
}

function printWriteCost(names: string[], runs: Runs): void {
  console.log('## Trending views: item increments through the service (64 in flight, 10 000 items)\n');
  console.log(
    '| board (windows 1 h / 5 m, 24 h / 1 h) | increments/s (median) | vs plain (median of paired runs) | µs per call inside Redis |',
  );
  console.log('|---|---|---|---|');
  const plain = runs.get('plain')!;
  for (const name of names) {
    const own = runs.get(name)!;
    const ratio = median(own.map((run, i) => run.perSec / plain[i].perSec));
    console.log(
      `| ${name === 'plain' ? 'plain' : `with ${VIEWS_SAID[name] ?? `a ${name} view`}`} | ${fmt(median(own.map((r) => r.perSec)))} | ${ratio.toFixed(2)} | ${median(own.map((r) => r.micros)).toFixed(1)} |`,
    );
  }
  console.log('');
}

async function writeCost(redisUrl: string, repeats: number, durationSec: number): Promise<void> {
  const { redis, ranking } = await serviceOn(redisUrl, 'btrend:', new SystemClock());
  const boards: Array<[string, object[]]> = [
    ['plain', []],
    ['decay', [DECAY]],
    ['rising', [RISING]],
    ['all three', [DECAY, RISING, HOT]],
    [PAIR_BOARD, PAIR_VIEWS],
  ];
  for (const [name, views] of boards)
    await ranking.putBoard({
      name: name.replaceAll(' ', '-'),
      windows: WINDOWS,
      shards: 1,
      reset: true,
      views: views as never,
      ...(name === PAIR_BOARD ? { metrics: ['up', 'down'] } : {}),
    });
  const names = boards.map(([name]) => name);
  printWriteCost(names, await incrementRuns({ redis, ranking, names, repeats, durationSec }));
  for (const name of names) await ranking.deleteBoard(name.replaceAll(' ', '-'));
  await redis.onApplicationShutdown();
}

/** How the table names the boards of several views. */
const VIEWS_SAID: Record<string, string> = {
  'all three': 'decay, rising and hot views',
  [PAIR_BOARD]: 'metrics up and down, a wilson and a controversial view',
};

const burstItem = (k: number) => `item-${k + 1}`;
/** A step's entries go in batches as large as the bursts board's write call admits. */
const BURSTS_BATCH = entriesPerCall({ windows: WINDOWS, views: [RISING] as never });
type Step = (endSec: number, extra: Map<number, number>) => Promise<void>;
type Planted = Array<{ k: number; onset: number }>;

/** One step of background (and bursts) ending at `endSec`, each event at a random time within the step. */
function stepper(ranking: Service['ranking'], random: () => number): Step {
  const harmonic = Array.from({ length: ITEMS }, (_, k) => 1 / (k + 1)).reduce((a, b) => a + b, 0);
  const perStep = Array.from(
    { length: ITEMS },
    (_, k) => (BACKGROUND_PER_HOUR / harmonic / (k + 1)) * (STEP_SEC / 3600),
  );
  return async (endSec, extra) => {
    const entries: Array<{ item: string; amount: number; at: number }> = [];
    perStep.forEach((rate, k) => {
      const count = poisson(rate, random) + (extra.get(k) ?? 0);
      const at = endSec + 1 - STEP_SEC + random() * (STEP_SEC - 1);
      if (count > 0) entries.push({ item: burstItem(k), amount: count, at });
    });
    for (const batch of batchesOf(entries, BURSTS_BATCH)) await ranking.incrementBatch('bursts', batch);
  };
}

/** Step by step with the bursts planted: which bursts each read shows early, and which other items it shows. */
async function watchBursts(run: {
  ranking: Service['ranking'];
  clock: FakeClock;
  step: Step;
  planted: Planted;
  startSec: number;
  steps: number;
}) {
  const { ranking, clock, step, planted, startSec, steps } = run;
  const foundBy = { rising: new Set<number>(), sum: new Set<number>() };
  const falsePositives = new Set<string>();
  const sumOthers = new Set<string>();
  for (let s = 0; s < steps; s++) {
    const extra = new Map<number, number>();
    const bursting = new Set<string>();
    planted.forEach((burst) => {
      if (s >= burst.onset && s < burst.onset + BURST_STEPS) extra.set(burst.k, BURST_PER_STEP);
      // A burst stays a burst while it is in the hour window.
      if (s >= burst.onset && s < burst.onset + 12 + BURST_STEPS) bursting.add(burstItem(burst.k));
    });
    const endSec = startSec + (s + 1) * STEP_SEC - 1;
    clock.setMs(endSec * 1000);
    await step(endSec, extra);
    // The scheduler's pass (every second in production): expired slots drained before the reads.
    await ranking.expireDue(SCHEDULER_PASS);
    const rising = (await ranking.top('bursts', 'rising', 0, 10)).items;
    const sum = (await ranking.top('bursts', 'hour', 0, 10)).items;
    planted.forEach((burst, b) => {
      if (s < burst.onset || s > burst.onset + 1) return;
      if (rising.some((row) => row.item === burstItem(burst.k))) foundBy.rising.add(b);
      if (sum.some((row) => row.item === burstItem(burst.k))) foundBy.sum.add(b);
    });
    const hour = Math.floor(s / 12);
    for (const row of rising)
      if (!bursting.has(row.item) && row.score >= ALERT_SCORE) falsePositives.add(`${hour}:${row.item}`);
    for (const row of sum) if (!bursting.has(row.item)) sumOthers.add(`${hour}:${row.item}`);
  }
  return { foundBy, falsePositives, sumOthers };
}

function printBursts({ foundBy, falsePositives, sumOthers }: Awaited<ReturnType<typeof watchBursts>>): void {
  console.log(
    `## Bursts: ${ITEMS.toLocaleString('en')} items (Zipf, ${BACKGROUND_PER_HOUR.toLocaleString('en')} events/h) over a 24 h baseline planted with \`at\`, ${BURSTS} bursts of +${BURST_PER_STEP} per 5 min for ${BURST_STEPS * 5} min, ${SIMULATED_HOURS} simulated hours\n`,
  );
  console.log(
    '| read | bursts in the top 10 within 2 intervals of onset | other items in the top 10 per simulated hour |',
  );
  console.log('|---|---|---|');
  console.log(
    `| rising view (1 h against 24 h) | ${foundBy.rising.size} of ${BURSTS} | ${(falsePositives.size / SIMULATED_HOURS).toFixed(2)} (score >= ${ALERT_SCORE}) |`,
  );
  console.log(
    `| sum over the same 1 h window | ${foundBy.sum.size} of ${BURSTS} | ${(sumOthers.size / SIMULATED_HOURS).toFixed(2)} |`,
  );
  console.log('');
}

async function bursts(redisUrl: string): Promise<void> {
  const startSec = Math.floor(Date.now() / 1000 / 3600) * 3600;
  const clock = new FakeClock(startSec * 1000);
  const { redis, ranking } = await serviceOn(redisUrl, 'bburst:', clock);
  await ranking.putBoard({ name: 'bursts', windows: WINDOWS, shards: 1, reset: true, views: [RISING] as never });
  const random = mulberry32(13);
  const step = stepper(ranking, random);
  // The baseline: the day window's 23 h of live span planted with `at`, all sent at the start.
  clock.setMs(startSec * 1000);
  for (let endSec = startSec - 23 * 3600 + STEP_SEC; endSec <= startSec; endSec += STEP_SEC)
    await step(endSec, new Map());
  // Bursts: items of rank 100 to 2 000, onsets at random step starts after the first hour.
  const steps = (SIMULATED_HOURS * 3600) / STEP_SEC;
  const planted: Planted = Array.from({ length: BURSTS }, (_, b) => ({
    k: 99 + Math.floor(random() * (ITEMS - 99)),
    onset: 12 + Math.floor(((steps - 24) * (b + random())) / BURSTS),
  }));
  printBursts(await watchBursts({ ranking, clock, step, planted, startSec, steps }));
  await ranking.deleteBoard('bursts');
  await redis.onApplicationShutdown();
}

/** A Poisson count: Knuth's product of uniforms for small means, a rounded normal beyond. */
function poisson(mean: number, random: () => number): number {
  if (mean > 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * gaussian(random)));
  const limit = Math.exp(-mean);
  let count = 0;
  for (let p = random(); p > limit; p *= random()) count++;
  return count;
}

function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** A seeded generator: the same background and bursts every run. */
function mulberry32(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en');
}
