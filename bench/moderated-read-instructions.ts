/**
 * The reads of the board holding the most moderation in Redis instructions (issue #45: the worst-case
 * rows of wc-modgroups over 5 ms a call): `npm run bench -- --part moderated-read-instructions`,
 * a few minutes. redis-server runs under callgrind (startCallgrindRedis), which counts the instructions
 * it executes whatever else the machine does. wc-modgroups at the harness's `ci` sizes, moderated as the
 * moderation rows leave it (seedModeratedGroups), a snapshot boundary crossed; then each row's read
 * READ_BENCH_ATTEMPTS times, each call between two dumps of the counters: its own instructions.
 */
import { WriteCommands } from '../src/ranking/writes/write-commands';
import { RedisFunctions } from '../src/redis/redis-functions';
import { type RankingGraph } from '../harness/compose-ranking';
import { counting } from './redis-instructions';
import { perCall, withCallgrindRanking } from './callgrind-ranking';
import { seedModeratedGroups } from './write-bench-seed';

const ATTEMPTS = Number(process.env.READ_BENCH_ATTEMPTS ?? 2);
const ROWS = new RegExp(process.env.READ_BENCH_ROWS ?? '.');
const BOARD = 'wc-modgroups';

/** The moderation rows' reads on wc-modgroups (moderation-rows.ts). */
function rows(graph: RankingGraph): Array<[string, () => Promise<unknown>]> {
  const ids = Array.from({ length: 1000 }, (_, n) => `i${(n * 13) % 2000}`);
  return [
    ['top 10 from the head, ties first', () => graph.ranking.top(BOARD, 'm', 0, 10)],
    ['top 1 000 from the head, ties first', () => graph.ranking.top(BOARD, 'm', 0, 1000)],
    ['top 1 000 of a decay view', () => graph.ranking.top(BOARD, 'fading', 0, 1000)],
    ['top 1 000 of the longest span', () => graph.ranking.top(BOARD, 'm', 0, 1000, { span: '10000m' })],
    [
      'lookup of 1 000 ids',
      () =>
        graph.lookup.lookup({ name: BOARD, window: 'm', items: [...new Set(ids)], relative: false, withData: false }),
    ],
  ];
}

const millions = (n: number) => (n / 1e6).toFixed(2);

export async function moderatedReadInstructionsBench(): Promise<void> {
  await withCallgrindRanking(
    1_700_000_000_000,
    async ({ server, graph, clock }) => {
      await seedModeratedGroups({ graph, commands: new WriteCommands(clock) });
      // A boundary crossed, its listing stored by an unmeasured read: previous ranks from it.
      clock.advanceMs(60_000);
      await graph.ranking.top(BOARD, 'm', 0, 1);
      const functions = graph.module.get(RedisFunctions);
      counting(server, true);
      console.log('| read (attempt) | calls | M instructions | costliest call (M) | calls (M) |');
      console.log('| --- | ---: | ---: | ---: | --- |');
      for (const [label, read] of rows(graph).filter(([name]) => ROWS.test(name)))
        for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
          const calls = await perCall(server, functions, read);
          const total = calls.reduce((sum, n) => sum + n, 0);
          console.log(
            `| ${label} (${attempt}) | ${calls.length} | ${millions(total)} | ${millions(Math.max(...calls))} | ${calls.map(millions).join(', ')} |`,
          );
        }
    },
    // The harness's boards were stored past the write bound (PAST_WRITE_BOUND).
    { WRITE_COST_PER_CALL: '1000000' },
    ['--instr-atstart=no'],
  );
}
