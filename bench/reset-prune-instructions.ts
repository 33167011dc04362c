import type Redis from 'ioredis';
/**
 * A reset of a one-shard `groups: true` board at the documented maxima (issue #45: 100 000 items, each
 * in the groups map, with 1 KB of data, the reset remaking its one window): the Redis instructions of
 * each call the board PUT sends, counted under callgrind (startCallgrindRedis), whatever else the
 * machine does. `npm run bench -- --part reset-prune-instructions`, several minutes;
 * RESET_BENCH_ITEMS (100 000) and RESET_BENCH_DATA_BYTES (1 012: a 1 KB JSON object; 0: no data) size
 * it. The items are stored as the app stores them (a results zset entry, the map and its reverse, the
 * data), past any client's quota. Prints the reset call, the prune steps' median, 99th percentile and
 * costliest, and the totals: each call's own instructions (fcallInstructions), then all the dumps counted.
 */
import { type CountedFcall, perFcall, withCallgrindRanking } from './callgrind-ranking';

const ITEMS = Number(process.env.RESET_BENCH_ITEMS ?? 100_000);
const DATA_BYTES = Number(process.env.RESET_BENCH_DATA_BYTES ?? 1012);
const SEP = '\x1f';
const PIPELINE_ITEMS = 2000;

/** Millions of instructions, two decimals. */
const millions = (instructions: number) => (instructions / 1e6).toFixed(2);

/** `ITEMS` items in wide's window, each in one of 100 groups (and with DATA_BYTES of item data), pipelined. */
async function seedWide(redis: Redis, tag: string): Promise<void> {
  const blob = JSON.stringify({ blob: 'x'.repeat(Math.max(0, DATA_BYTES - 11)) });
  for (let first = 0; first < ITEMS; first += PIPELINE_ITEMS) {
    const batch = redis.pipeline();
    for (let i = first; i < Math.min(ITEMS, first + PIPELINE_ITEMS); i++) {
      const group = `g${i % 100}`;
      batch.zadd(`${tag}m:top`, 1, `i${i}`).hset(`${tag}groups`, `i${i}`, group);
      batch.zadd(`${tag}bygroup`, 0, `${group}${SEP}i${i}`);
      if (DATA_BYTES > 0) batch.hset(`${tag}data`, `i${i}`, blob);
    }
    await batch.exec();
  }
}

export async function resetPruneInstructionsBench(): Promise<void> {
  await withCallgrindRanking(1_699_999_980_000, async ({ server, redis, graph }) => {
    const windows = [{ name: 'm', period: 3600, interval: 60 }];
    await graph.ranking.putBoard({ name: 'wide', windows, groups: true });
    const [cfg] = await redis.keys('*board:wide}:cfg');
    const tag = cfg.slice(0, -'cfg'.length);
    await seedWide(redis, tag);
    const reset = [{ name: 'm', period: 7200, interval: 60 }];
    const calls = await perFcall(server, () =>
      graph.ranking.putBoard({ name: 'wide', windows: reset, groups: true, reset: true }),
    );
    const [first, ...steps] = calls;
    console.log('| items | data bytes | calls | reset call (M) | steps: median / p99 / most (M) | all calls (M) |');
    console.log('| ---: | ---: | ---: | --- | --- | ---: |');
    const spread = (of: (call: CountedFcall) => number) => {
      const sorted = steps.map(of).sort((a, b) => a - b);
      const at = (share: number) => millions(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))]);
      return `${at(0.5)} / ${at(0.99)} / ${at(1)}`;
    };
    const row = (what: string, of: (call: CountedFcall) => number) =>
      `| ${ITEMS} | ${DATA_BYTES} | ${calls.length} | ${millions(of(first))} (${first.name}) | ${spread(of)} | ${millions(
        calls.reduce((sum, call) => sum + of(call), 0),
      )} (${what}) |`;
    console.log(row('the calls own', (call) => call.own));
    console.log(row('the dumps', (call) => call.ir));
    if (process.env.RESET_BENCH_EACH)
      for (const [n, call] of calls.entries())
        console.log(`${n} ${call.name} ${millions(call.own)} ${millions(call.ir)} ${call.file}`);
    console.log(`left after it: groups ${await redis.hlen(`${tag}groups`)}, data ${await redis.hlen(`${tag}data`)}`);
  });
}
