/**
 * A leagues rollover in a process of its own, for the crash test (ranking.leagues-crash.int-spec.ts):
 * at NOW_MS it rolls the closed periods of the board LEAGUE_BOARD, one step each time the parent sends
 * { budget } (units), and answers { done } after each, until killed
 * (SIGKILL: a crash). Its environment comes from the test (REDIS_URL, KEY_PREFIX).
 */
import { composeRanking } from '../../harness/compose-ranking';
import { FakeClock } from '../../harness/clock';
import { validateConfig } from '../../src/common/config';
import { LeaguesStore } from '../../src/ranking/leagues/leagues.store';
import { RedisService } from '../../src/redis/redis.service';
import { RedisSettings } from '../../src/redis/redis.settings';
import { RedisFunctions } from '../../src/redis/redis-functions';

async function main(): Promise<void> {
  const env = process.env as Record<string, string>;
  const clock = new FakeClock(Number(env.NOW_MS));
  const config = validateConfig({ ...env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
  const connection = new RedisService(RedisSettings.from(config), clock);
  await connection.waitUntilReady(10_000);
  const graph = await composeRanking(connection, new RedisFunctions(connection), config, clock);
  const board = await graph.cache.get(env.LEAGUE_BOARD);
  const at = { board, nowMs: clock.nowMs(), currentSec: Number(env.CURRENT_SEC) };
  const store = graph.module.get(LeaguesStore);
  process.on('message', (message: { budget: number }) => {
    void store.roll(at, message.budget).then((done) => process.send?.({ done }));
  });
  process.send?.('ready');
}

void main().catch((error: unknown) => {
  process.stderr.write(`league roller failed: ${String(error)}\n`);
  process.exit(1);
});
