/**
 * The first read of a window after a snapshot boundary, counted in Redis instructions (issue #45):
 * `npm run bench -- --part snapshot-read-instructions`, about a minute. redis-server runs
 * under callgrind (startCallgrindRedis), which counts the user-space instructions it executes whatever
 * else the machine does. On a one-shard board of 2 400 items keeping snapshots of 1 000 rows, each
 * round moves the clock a minute and reads `top` 1 000 twice: the first read stores the listing and
 * reads its page (two calls: the snapshot, then the page), the second reads the page alone (one call);
 * so the snapshot's call costs about the first read less the second.
 */
import { dumpCounts } from './redis-instructions';
import { withCallgrindRanking } from './callgrind-ranking';

const ITEMS = 2400;
const PAGE = 1000;
const ROUNDS = 3;
const MINUTE_MS = 60_000;
const WINDOWS = [{ name: 'w', period: '1h', interval: '1m', snapshots: { keep: 3, top: PAGE } }];

/** Millions of instructions, two decimals. */
const millions = (instructions: number) => (instructions / 1e6).toFixed(2);

export async function snapshotReadInstructionsBench(): Promise<void> {
  await withCallgrindRanking(1_699_999_980_000, async ({ server, redis, graph: { ranking }, clock }) => {
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
  });
}
