/**
 * A lookup's Redis instructions per call and per id (issue #45: a 1 000-id lookup on a moderated
 * one-shard board): `npm run bench -- --part lookup-instructions`, a few minutes.
 * redis-server runs under callgrind (startCallgrindRedis), which counts the instructions it executes
 * whatever else the machine does. Boards of 2 000 items keeping snapshots of 1 000 rows (previous
 * ranks), 200 of them hidden, one with `ties: first`, one without; lookups of 25, 100 and 1 000 ids,
 * each read once unmeasured, then measured. The fixed cost of a call is the 0-id-equivalent: the
 * per-id cost is the slope between the 25- and 100-id rows' instructions per call.
 */
import Redis from 'ioredis';
import { type RankingGraph } from '../harness/compose-ranking';
import { FakeClock } from '../harness/clock';
import { ModerationService } from '../src/ranking/moderation/moderation.service';
import { dumpCounts, type Callgrind } from './redis-instructions';
import { perFcall, withCallgrindRanking, type CountedFcall } from './callgrind-ranking';

const ITEMS = 2000;
const MINUTE_MS = 60_000;
const IDS = (process.env.LOOKUP_BENCH_IDS ?? '1,25,100,1000').split(',').map(Number);

/** Millions of instructions, two decimals. */
const millions = (instructions: number) => (instructions / 1e6).toFixed(2);

/** Prints a row of `read`'s calls and instructions, its second run. */
async function measure(server: Callgrind, redis: Redis, label: string, read: () => Promise<unknown>): Promise<void> {
  // lookup_node is read-only (FCALL_RO): both kinds count.
  const fcalls = async () =>
    [...(await redis.info('commandstats')).matchAll(/cmdstat_fcall(?:_ro)?:calls=(\d+)/g)].reduce(
      (sum, match) => sum + Number(match[1]),
      0,
    );
  await read();
  dumpCounts(server);
  const before = await fcalls();
  await read();
  const instructions = dumpCounts(server).counts.Ir;
  const calls = (await fcalls()) - before;
  console.log(`| ${label} | ${calls} | ${millions(instructions)} | ${millions(instructions / calls)} |`);
}

/** A board crossed by two snapshot boundaries (previous ranks), every tenth item hidden. */
async function seedModerated(graph: RankingGraph, clock: FakeClock, name: string, ties: boolean): Promise<void> {
  const windows = [{ name: 'm', period: 3600, interval: 60, snapshots: { keep: 3, top: 1000 } }];
  await graph.ranking.putBoard({ name, windows, ...(ties ? { ties: 'first' as const } : {}) });
  for (let round = 0; round < 2; round++) {
    for (let first = 0; first < ITEMS; first += 100) {
      const amount = (n: number) => 1 + ((n * (round + 3)) % 400);
      const entries = Array.from({ length: 100 }, (_, k) => ({ item: `i${first + k}`, amount: amount(first + k) }));
      await graph.ranking.incrementBatch(name, entries);
    }
    clock.advanceMs(MINUTE_MS);
    await graph.ranking.top(name, 'm', 0, 1);
  }
  const moderation = graph.module.get(ModerationService);
  for (let k = 0; k < ITEMS / 10; k++) await moderation.setState({ name, item: `i${k * 10 + 1}`, state: 'hidden' });
}

/**
 * LOOKUP_BENCH_SHARDS=64: the harness's rows of the most ids the count cap takes on a sharded board
 * (31 on 64 shards of `ties: first`, 93 on 64 plain), with and without data, instead of the moderated
 * boards; then each call of those lookups.
 */
async function sharded(server: Callgrind, redis: Redis, graph: RankingGraph, shards: number): Promise<void> {
  const windows = [{ name: 'm', period: 3600, interval: 60 }];
  await graph.ranking.putBoard({ name: 'wide', windows, ties: 'first', shards });
  await graph.ranking.putBoard({ name: 'flat', windows, shards });
  for (const name of ['wide', 'flat'])
    for (let first = 0; first < ITEMS; first += 500) {
      const entries = Array.from({ length: 500 }, (_, k) => ({ item: `i${first + k}`, amount: 1 + ((first + k) % 7) }));
      await graph.ranking.incrementBatch(name, entries);
    }
  console.log('| lookup | calls | M instructions | M a call |');
  console.log('| --- | ---: | ---: | ---: |');
  const idsOf = (count: number) => Array.from({ length: count }, (_, n) => `i${(n * 7) % ITEMS}`);
  const cases = [
    { name: 'wide', items: idsOf(31), kind: 'ties: first' },
    { name: 'flat', items: idsOf(Math.floor(6000 / shards)), kind: 'plain' },
  ];
  for (const { name, items, kind } of cases)
    for (const withData of [true, false]) {
      const ask = { name, window: 'm', items, relative: false, withData };
      const label = `${items.length} ids on ${shards} shards, ${kind}${withData ? ', data' : ''}`;
      await measure(server, redis, label, () => graph.lookup.lookup(ask));
    }
  await eachCall(
    server,
    graph,
    'wide',
    idsOf(31).map((item) => [item]),
  );
  // A plain board's calls of nodeIdsPerCall ids (3 on 64 shards): a lookup each.
  await eachCall(
    server,
    graph,
    'flat',
    Array.from({ length: 31 }, (_, c) => cases[1].items.slice(3 * c, 3 * c + 3)),
  );
}

/**
 * Each FCALL's instructions (perFcall: what its dump counted, the call and whatever ran meanwhile)
 * of the lookups of each of `lookups` on `name`, with data: the least and most of one call. perFcall
 * sends the calls one after the other, dumping around each (a `ties: first` board's ids one a lookup:
 * 31 ids' calls queued at once would pass the command deadline).
 */
async function eachCall(server: Callgrind, graph: RankingGraph, name: string, lookups: string[][]): Promise<void> {
  const calls: CountedFcall[] = [];
  for (const items of lookups) {
    const ask = { name, window: 'm', items, relative: false, withData: true };
    await graph.lookup.lookup(ask);
    calls.push(...(await perFcall(server, () => graph.lookup.lookup(ask))));
  }
  const irs = calls.map((call) => call.ir);
  const range = `${millions(Math.min(...irs))}-${millions(Math.max(...irs))}`;
  console.log(
    `\n${name}: ${lookups.flat().length} ids in ${lookups.length} lookups, data: ${calls.length} calls, M one call ${range}`,
  );
}

export async function lookupInstructionsBench(): Promise<void> {
  // perFcall's calls are sent alone, not through an auto-pipeline.
  const settings = { REDIS_AUTO_PIPELINING: 'false' };
  await withCallgrindRanking(
    1_699_999_980_000,
    async ({ server, redis, graph, clock }) => {
      if (process.env.LOOKUP_BENCH_SHARDS)
        return await sharded(server, redis, graph, Number(process.env.LOOKUP_BENCH_SHARDS));
      await seedModerated(graph, clock, 'first', true);
      await seedModerated(graph, clock, 'plain', false);
      console.log('| lookup | calls | M instructions | M a call |');
      console.log('| --- | ---: | ---: | ---: |');
      for (const name of ['first', 'plain'])
        for (const ids of IDS) {
          const items = Array.from({ length: ids }, (_, n) => `i${(n * 13) % ITEMS}`);
          const ask = { name, window: 'm', items: [...new Set(items)], relative: false, withData: true };
          const label = `${ask.items.length} ids, 200 hidden, ${name === 'first' ? 'ties: first' : 'plain'}, data`;
          await measure(server, redis, label, () => graph.lookup.lookup(ask));
        }
    },
    settings,
  );
}
