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
import { perFcall, withCallgrindRanking } from './callgrind-ranking';

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
 * LOOKUP_BENCH_SHARDS=64: the harness's row of the most ids the count cap takes on a sharded `ties:
 * first` board (31 on 64), with and without data, instead of the moderated boards.
 */
async function sharded(server: Callgrind, redis: Redis, graph: RankingGraph, shards: number): Promise<void> {
  const windows = [{ name: 'm', period: 3600, interval: 60 }];
  await graph.ranking.putBoard({ name: 'wide', windows, ties: 'first', shards });
  for (let first = 0; first < ITEMS; first += 500) {
    const entries = Array.from({ length: 500 }, (_, k) => ({ item: `i${first + k}`, amount: 1 + ((first + k) % 7) }));
    await graph.ranking.incrementBatch('wide', entries);
  }
  console.log('| lookup | calls | M instructions | M a call |');
  console.log('| --- | ---: | ---: | ---: |');
  const items = Array.from({ length: 31 }, (_, n) => `i${(n * 7) % ITEMS}`);
  for (const withData of [true, false]) {
    const ask = { name: 'wide', window: 'm', items, relative: false, withData };
    const label = `31 ids on ${shards} shards, ties: first${withData ? ', data' : ''}`;
    await measure(server, redis, label, () => graph.lookup.lookup(ask));
  }
  await eachCall(server, graph, items);
}

/**
 * Each FCALL's instructions (perFcall: what its dump counted, the call and whatever ran meanwhile)
 * of the lookups of `items` one id at a time, with data: the
 * least and most of one call. An id a lookup: perFcall sends the calls one after the other, dumping
 * around each, and 31 ids' calls queued at once would pass the command deadline.
 */
async function eachCall(server: Callgrind, graph: RankingGraph, items: string[]): Promise<void> {
  const own: number[] = [];
  for (const item of items) {
    const ask = { name: 'wide', window: 'm', items: [item], relative: false, withData: true };
    await graph.lookup.lookup(ask);
    own.push(...(await perFcall(server, () => graph.lookup.lookup(ask))).map((call) => call.ir));
  }
  const range = `${millions(Math.min(...own))}-${millions(Math.max(...own))}`;
  console.log(`\n${items.length} ids one a lookup, with data: ${own.length} calls, M one call ${range}`);
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
