/**
 * The first read of a window after a snapshot boundary, counted in Redis instructions (issue #45):
 * `npx ts-node --transpile-only bench/snapshot-read-instructions.ts`, about a minute. redis-server runs
 * under callgrind (startCallgrindRedis), which counts the user-space instructions it executes whatever
 * else the machine does. On a one-shard board of 2 400 items keeping snapshots of 1 000 rows, each
 * round moves the clock a minute and reads `top` 1 000 twice: the first read stores the listing and
 * reads its page (two calls: the snapshot, then the page), the second reads the page alone (one call);
 * so the snapshot's call costs about the first read less the second.
 */
import Redis from 'ioredis';
import { composeRanking } from '../harness/compose-ranking';
import { FakeClock } from '../harness/clock';
import { stopChild } from '../harness/processes';
import { validateConfig } from '../src/common/config';
import { RedisFunctions } from '../src/redis/redis-functions';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { runWhenMain } from './process-stats';
import { dumpCounts, startCallgrindRedis } from './redis-instructions';

const ITEMS = 2400;
const PAGE = 1000;
const ROUNDS = 3;
const MINUTE_MS = 60_000;
const WINDOWS = [{ name: 'w', period: '1h', interval: '1m', snapshots: { keep: 3, top: PAGE } }];

/** Millions of instructions, two decimals. */
const millions = (instructions: number) => (instructions / 1e6).toFixed(2);

async function bench(): Promise<void> {
  const server = await startCallgrindRedis();
  const clock = new FakeClock(1_699_999_980_000);
  // Valgrind runs Redis about 50 times slower: the calls get the deadline of a bench.
  const config = validateConfig({ REDIS_URL: server.url, REDIS_COMMAND_TIMEOUT_MS: '60000' });
  const service = new RedisService(RedisSettings.from(config), clock);
  const redis = new Redis(server.url);
  try {
    await service.waitUntilReady(60_000);
    const { ranking } = await composeRanking(service, new RedisFunctions(service), config, clock);
    const fcalls = async () => Number(/cmdstat_fcall:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);
    console.log('| ties | first read after a boundary (M instructions, calls) | the same page again |');
    console.log('| --- | ---: | ---: |');
    for (const ties of ['shared', 'first'] as const) {
      const board = `snap-${ties}`;
      await ranking.putBoard({ name: board, windows: WINDOWS, ties });
      for (let first = 0; first < ITEMS; first += 100) {
        const entries = Array.from({ length: 100 }, (_, k) => ({
          item: `i${first + k}`,
          amount: 1 + ((first + k) % 400),
        }));
        await ranking.incrementBatch(board, entries);
      }
      await ranking.top(board, 'w', 0, PAGE);
      for (let round = 0; round < ROUNDS; round++) {
        clock.advanceMs(MINUTE_MS);
        dumpCounts(server);
        const callsBefore = await fcalls();
        await ranking.top(board, 'w', 0, PAGE);
        const firstRead = dumpCounts(server).counts.Ir;
        const calls = (await fcalls()) - callsBefore;
        await ranking.top(board, 'w', 0, PAGE);
        const again = dumpCounts(server).counts.Ir;
        console.log(
          `| ${ties} | ${millions(firstRead)} (${calls} ${calls === 1 ? 'call' : 'calls'}) | ${millions(again)} |`,
        );
      }
    }
  } finally {
    redis.disconnect();
    await service.onApplicationShutdown();
    await stopChild(server.child);
  }
}

runWhenMain(module, bench);
