/**
 * Reads that issue #45 split into calls, counted in Redis instructions: `npm run bench --
 * --part split-calls-instructions`, about a minute. redis-server runs under callgrind
 * (startCallgrindRedis), which counts the instructions it executes whatever else the machine does. A
 * lookup of 25 and of 100 ids on a one-shard `ties: first` board of 2 000 items keeping snapshots of
 * 1 000 rows, 200 of them hidden (LOOKUP_IDS_PER_CALL ids a call), and a wilson view's top of 250 and of
 * 1 000 rows (COUNTED_VIEW_ROWS_PER_CALL rows a call): each read once unmeasured, then measured.
 */
import Redis from 'ioredis';
import { type RankingGraph } from '../harness/compose-ranking';
import { FakeClock } from '../harness/clock';
import { ModerationService } from '../src/ranking/moderation/moderation.service';
import { dumpCounts, type Callgrind } from './redis-instructions';
import { withCallgrindRanking } from './callgrind-ranking';

const ITEMS = 2000;
const MINUTE_MS = 60_000;

/** Millions of instructions, two decimals. */
const millions = (instructions: number) => (instructions / 1e6).toFixed(2);

/** Prints a row of `read`'s calls and instructions, its second run. */
async function measure(server: Callgrind, redis: Redis, label: string, read: () => Promise<unknown>): Promise<void> {
  const fcalls = async () => Number(/cmdstat_fcall:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);
  await read();
  dumpCounts(server);
  const before = await fcalls();
  await read();
  const instructions = dumpCounts(server).counts.Ir;
  console.log(`| ${label} | ${(await fcalls()) - before} | ${millions(instructions)} |`);
}

/** The moderated board: two snapshot boundaries crossed (previous ranks), every tenth item hidden. */
async function seedModerated(graph: RankingGraph, clock: FakeClock): Promise<void> {
  const windows = [{ name: 'm', period: 3600, interval: 60, snapshots: { keep: 3, top: 1000 } }];
  await graph.ranking.putBoard({ name: 'mod', windows, ties: 'first' });
  for (let round = 0; round < 2; round++) {
    for (let first = 0; first < ITEMS; first += 100) {
      const amount = (n: number) => 1 + ((n * (round + 3)) % 400);
      const entries = Array.from({ length: 100 }, (_, k) => ({ item: `i${first + k}`, amount: amount(first + k) }));
      await graph.ranking.incrementBatch('mod', entries);
    }
    clock.advanceMs(MINUTE_MS);
    await graph.ranking.top('mod', 'm', 0, 1);
  }
  const moderation = graph.module.get(ModerationService);
  for (let k = 0; k < ITEMS / 10; k++)
    await moderation.setState({ name: 'mod', item: `i${k * 10 + 1}`, state: 'hidden' });
}

/** The wilson view's board: up counts 1-37 and down counts 1-11 over its items. */
async function seedRated(graph: RankingGraph): Promise<void> {
  const views = [{ name: 'best', mode: 'wilson' as const, window: 'w', positive: 'up', negative: 'down' }];
  const windows = [{ name: 'w', period: 3600, interval: 60 }];
  await graph.ranking.putBoard({ name: 'rated', windows, metrics: ['up', 'down'], views });
  for (const [metric, cycle] of [['up', 37] as const, ['down', 11] as const])
    for (let first = 0; first < ITEMS; first += 500) {
      const entries = Array.from({ length: 500 }, (_, k) => ({
        item: `i${first + k}`,
        amount: 1 + ((first + k) % cycle),
      }));
      await graph.ranking.incrementBatch(
        'rated',
        entries.map((entry) => ({ ...entry, metric })),
      );
    }
}

export async function splitCallsInstructionsBench(): Promise<void> {
  await withCallgrindRanking(1_699_999_980_000, async ({ server, redis, graph, clock }) => {
    await seedModerated(graph, clock);
    await seedRated(graph);
    console.log('| read | calls | M instructions |');
    console.log('| --- | ---: | ---: |');
    for (const ids of [25, 100]) {
      const items = Array.from({ length: ids }, (_, n) => `i${(n * 13) % ITEMS}`);
      const ask = { name: 'mod', window: 'm', items, relative: false, withData: false };
      await measure(server, redis, `lookup of ${ids} ids, 200 hidden`, () => graph.lookup.lookup(ask));
    }
    for (const limit of [250, 1000])
      await measure(server, redis, `wilson top ${limit}`, () => graph.ranking.top('rated', 'best', 0, limit));
  });
}
