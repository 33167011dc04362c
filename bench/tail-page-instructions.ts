/**
 * A tail page's calls in Redis instructions (issue #45: the one-shard deepest tail page, ~1 000 commands
 * a call): `npx ts-node --transpile-only bench/tail-page-instructions.ts`, a few minutes. redis-server
 * runs under callgrind (startCallgrindRedis), which counts the instructions it executes whatever else the
 * machine does. A one-shard board of `tail: { exact: 10, below: 1000 }` whose closed minute holds 2 000
 * items seen once (every field but the best 10 leaves it): the first page of 2 064 rows read after the
 * minute closed prunes it (EXPIRE_CHUNK budget units a call) and looks at its filter for each row, in
 * TAIL_CALLS_PER_READ calls. Prints its calls, their instructions and the costliest call's commands.
 */
import { StandingStore } from '../src/ranking/standing/standing.store';
import { WriteCommands } from '../src/ranking/writes/write-commands';
import { runWhenMain } from './process-stats';
import { dumpCounts } from './redis-instructions';
import { withCallgrindRanking } from './callgrind-ranking';

const ITEMS = 2000;
const PAGE_ROWS = 2064;

async function bench(): Promise<void> {
  await withCallgrindRanking(1_700_000_000_000, async ({ server, redis, graph, clock }) => {
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
  });
}

runWhenMain(module, bench);
