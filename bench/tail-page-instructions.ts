/**
 * A tail page's calls in Redis instructions (issue #45: the one-shard deepest tail page, ~1 000 commands
 * a call): `npx ts-node --transpile-only bench/tail-page-instructions.ts`, a few minutes. redis-server
 * runs under callgrind (startCallgrindRedis), which counts the instructions it executes whatever else the
 * machine does. A one-shard board of `tail: { exact: 10, below: 1000 }` whose closed minute holds 2 000
 * items seen once (every field but the best 10 leaves it): the first page of 2 064 rows read after the
 * minute closed prunes it (EXPIRE_CHUNK budget units a call) and looks at its filter for each row, in
 * TAIL_CALLS_PER_READ calls. Prints its calls, their instructions and the costliest call's commands.
 */
import Redis from 'ioredis';
import { composeRanking } from '../harness/compose-ranking';
import { FakeClock } from '../harness/clock';
import { stopChild } from '../harness/processes';
import { validateConfig } from '../src/common/config';
import { StandingStore } from '../src/ranking/standing/standing.store';
import { WriteCommands } from '../src/ranking/writes/write-commands';
import { RedisFunctions } from '../src/redis/redis-functions';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { runWhenMain } from './process-stats';
import { dumpCounts, startCallgrindRedis } from './redis-instructions';

const ITEMS = 2000;
const PAGE_ROWS = 2064;

async function bench(): Promise<void> {
  const server = await startCallgrindRedis();
  const clock = new FakeClock(1_700_000_000_000);
  const config = validateConfig({ REDIS_URL: server.url, REDIS_COMMAND_TIMEOUT_MS: '60000' });
  const service = new RedisService(RedisSettings.from(config), clock);
  const redis = new Redis(server.url);
  try {
    await service.waitUntilReady(60_000);
    const graph = await composeRanking(service, new RedisFunctions(service), config, clock);
    const commands = new WriteCommands(clock);
    const windows = [{ name: 'h', period: '1h', interval: '1m' }];
    await graph.ranking.putBoard({ name: 'p', windows, tail: { exact: 10, below: 1000 } });
    for (let first = 0; first < ITEMS; first += 500) {
      const entries = Array.from({ length: 500 }, (_, k) => ({ item: `i${first + k}`, amount: 1 }));
      await graph.ranking.incrementBatch(commands.batch({ board: 'p', entries }));
    }
    clock.advanceMs(60_000);
    const board = await graph.cache.get('p');
    await redis.config('SET', 'slowlog-log-slower-than', '0');
    await redis.config('SET', 'slowlog-max-len', '100000');
    await redis.slowlog('RESET');
    await redis.config('RESETSTAT');
    dumpCounts(server);
    await graph.module
      .get(StandingStore)
      .tailTop({ board, window: board.config.windows[0], nowMs: clock.nowMs() }, PAGE_ROWS);
    const instructions = dumpCounts(server).counts.Ir;
    const stats = await redis.info('commandstats');
    const calls = Number(/cmdstat_fcall(?:_ro)?:calls=(\d+)/.exec(stats)?.[1] ?? 0);
    const entries = (await redis.slowlog('GET', 100_000)) as Array<[number, number, number, string[], string]>;
    const script = entries.filter((entry) => entry[4] === '?:0').length;
    console.log(`| calls | M instructions | M a call | commands in scripts |`);
    console.log(
      `| ${calls} | ${(instructions / 1e6).toFixed(2)} | ${(instructions / calls / 1e6).toFixed(2)} | ${script} |`,
    );
  } finally {
    redis.disconnect();
    await service.onApplicationShutdown();
    await stopChild(server.child);
  }
}

runWhenMain(module, bench);
