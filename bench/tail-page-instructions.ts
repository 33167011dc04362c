/**
 * A tail page's calls in Redis instructions (issue #45: the one-shard deepest tail page):
 * `npm run bench -- --part tail-page-instructions`, under a minute. redis-server runs under
 * callgrind (startCallgrindRedis), which counts the instructions it executes whatever else the machine
 * does. A one-shard board of `tail: { exact: 10, below: 1000 }` whose closed minute holds 2 000 items
 * seen once (every field but the best 10 leaves it): the first page of 2 064 rows read after the minute
 * closed is kept and pruned by its first call (EXPIRE_CHUNK budget units), its rows bounded by the calls
 * after it (TAIL_PART_EXPIRE_FIELDS of pruning each), in at most TAIL_CALLS_PER_READ calls; a page of one part (TAIL_PAGE_ROWS=164) is kept by the first call too while that call prunes.
 * Prints the read's calls, their instructions (the whole read's and the costliest call's, the
 * counters dumped around each call) and the commands its scripts ran (in all and in the costliest call).
 */
import { StandingStore } from '../src/ranking/standing/standing.store';
import { WriteCommands } from '../src/ranking/writes/write-commands';
import { perCall, withCallgrindRanking } from './callgrind-ranking';

const ITEMS = 2000;
/** TAIL_PAGE_ROWS: the page read (2 064, the deepest; 164, a `limit 100` page of one part). */
const PAGE_ROWS = Number(process.env.TAIL_PAGE_ROWS ?? 2064);
/** The client address SLOWLOG gives the commands a script ran. */
const SCRIPT_CLIENT = '?:0';

/** The commands each FCALL's script ran, oldest call first (a script's commands are logged before its call). */
function commandsPerCall(entries: Array<[number, number, number, string[], string]>): number[] {
  const calls: number[] = [];
  let inCall = 0;
  for (const entry of [...entries].reverse()) {
    if (entry[4] === SCRIPT_CLIENT) inCall += 1;
    else if (/^fcall/i.test(String(entry[3][0]))) {
      calls.push(inCall);
      inCall = 0;
    } else inCall = 0;
  }
  return calls;
}

export async function tailPageInstructionsBench(): Promise<void> {
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
    const store = graph.module.get(StandingStore);
    await redis.config('SET', 'slowlog-log-slower-than', '0');
    await redis.config('SET', 'slowlog-max-len', '100000');
    await redis.slowlog('RESET');
    const window = board.config.windows[0];
    let reply!: Awaited<ReturnType<typeof store.tailTop>>[0];
    const counted = await perCall(server, store.functions, async () => {
      [reply] = await store.tailTop({ board, window, nowMs: clock.nowMs() }, PAGE_ROWS);
    });
    const scripts = commandsPerCall(
      (await redis.slowlog('GET', 100_000)) as Array<[number, number, number, string[], string]>,
    );
    const total = counted.reduce((sum, n) => sum + n, 0);
    const bounded = reply.rows.filter((row) => row.dropped !== reply.hidden).length;
    console.log(
      `| calls | M instructions | M a call | costliest call (M) | commands in scripts | costliest call's | rows | rows bounded below H |`,
    );
    console.log(
      `| ${counted.length} | ${(total / 1e6).toFixed(2)} | ${(total / counted.length / 1e6).toFixed(2)} | ` +
        `${(Math.max(...counted) / 1e6).toFixed(2)} | ${scripts.reduce((sum, n) => sum + n, 0)} | ${Math.max(...scripts)} | ` +
        `${reply.rows.length} | ${bounded} |`,
    );
    console.log(`calls (M): ${counted.map((n) => (n / 1e6).toFixed(2)).join(', ')}; commands: ${scripts.join(', ')}`);
  });
}
