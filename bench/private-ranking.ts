/**
 * What the benches of a board with actors (bench/actors.ts, bench/aliases.ts) stand on: one private
 * redis-server, the ranking graph composed in this process at a FakeClock's time, and the board they
 * measure on, three windows (1 h/1 m, 1 d/1 h, 7 d/1 d) and two views (unique on 1 h, decay on 1 d).
 */
import { ChildProcess } from 'node:child_process';
import { validateConfig } from '../src/common/config';
import { composeRanking, RankingGraph } from '../harness/compose-ranking';
import { FakeClock } from '../harness/clock';
import { stopChild } from '../harness/processes';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { RedisFunctions } from '../src/redis/redis-functions';
import { loadAverage } from './call-rounds';
import { startRedisServer } from './process-stats';

export const ACTOR_BOARD_WINDOWS = [
  { name: 'hour', period: '1h', interval: '1m' },
  { name: 'day', period: '1d', interval: '1h' },
  { name: 'week', period: '7d', interval: '1d' },
];

export const ACTOR_BOARD_VIEWS = [
  { name: 'people', mode: 'unique', window: 'hour' },
  { name: 'decayed', mode: 'decay', window: 'day', halfLife: '6h' },
];

/** What a batch of 1 000 entries of the board with actors weighs (one write call). */
const SEED_BATCH_COST = 1000 * 48;

export interface PrivateRanking {
  graph: RankingGraph;
  clock: FakeClock;
  redisService: RedisService;
  server: { child: ChildProcess; url: string };
}

/**
 * Runs `bench` on a private redis-server with the graph composed at `nowMs`, prints the load average
 * before and after and the lines `bench` answers, then stops the graph's Redis client and the server
 * whatever happened.
 */
export async function benchOnPrivateRanking(
  nowMs: number,
  bench: (ranking: PrivateRanking) => Promise<string[]>,
): Promise<void> {
  const server = await startRedisServer();
  const clock = new FakeClock(nowMs);
  const config = validateConfig({
    REDIS_URL: server.url,
    REDIS_COMMAND_TIMEOUT_MS: '60000',
    // Their seeding (and actors.ts' replay baseline) sends batches of up to 1 000 entries of the board
    // (48 cost units each), past the default bound; no other measured call is a batch write.
    WRITE_COST_PER_CALL: String(SEED_BATCH_COST),
  });
  const redisService = new RedisService(RedisSettings.from(config), clock);
  try {
    await redisService.waitUntilReady(10_000);
    const graph = await composeRanking(redisService, new RedisFunctions(redisService), config, clock);
    const loadBefore = loadAverage();
    const lines = await bench({ graph, clock, redisService, server });
    console.log(`load average ${loadBefore} before, ${loadAverage()} after`);
    console.log(lines.join('\n'));
  } finally {
    await redisService.onApplicationShutdown();
    await stopChild(server.child);
  }
}
