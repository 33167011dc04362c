/**
 * Worst-case rows of the background jobs (the ranking scheduler's pass, the counters' cleaner, the stats
 * pruner), each run as its interval runs it after the harness's boards stood idle for weeks, and of the
 * sharded reads' fallbacks: shards a call over a node's shards cannot count (a boundary to cross, expired
 * slots to drain first) counted one by one.
 */
import { AppConfig } from '../../src/common/config';
import { post } from './board-rows';
import type { HarnessContext, WorstRow } from './harness-types';

const IDLE_WEEKS = 2;
const idle = (context: HarnessContext) => context.advanceSec(IDLE_WEEKS * 7 * 86_400);
const EXPIRE_CHUNK = new AppConfig().EXPIRE_CHUNK;

/** Items of the seeded 64-shard board, every shard's among them: one more to each, as the seeder. */
const EVERY_SHARD_ITEMS = 640;
async function writeEveryShard(context: HarnessContext): Promise<void> {
  for (let first = 0; first < EVERY_SHARD_ITEMS; first += 160) {
    const items = Array.from({ length: 160 }, (_, k) => ({ item: `i${first + k}`, amount: 1 }));
    const answer = await context.send(post('/boards/wc-shards/increments', { items }), 'seeder');
    if (answer.status >= 300) throw new Error(`writing every shard: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
}

/**
 * Run before the admin rows (which delete the 64-shard board): the clock stands a week past the
 * boards' seeding (the leagues rows), so every shard of the 64-shard board has a boundary to cross and
 * expired slots to drain.
 */
export const FALLBACK_ROWS: WorstRow[] = [
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst:
      "an existing item's write on 64 shards of 8 windows, every other shard holding an expired slot to drain in a window still live (after idle hours, every shard written 70 and 20 minutes before): WRITE_RANK_SHARD_DRAINS of them drained by count_above, the rest counted as they stand (draining)",
    // The hour window's slot of the first writes expired on every shard, its slot of the second still live.
    prepare: async (context) => {
      await context.advanceSec(2 * 3600);
      await writeEveryShard(context);
      await context.advanceSec(50 * 60);
      await writeEveryShard(context);
      await context.advanceSec(20 * 60);
    },
    request: () => post('/boards/wc-shards/items/i5/increment', { amount: 1 }),
    times: 1,
  },
  {
    route: 'GET /boards/{board}/items/{item}/history',
    worst:
      'an item through the kept snapshots of 1 000 rows on 64 shards, every other shard with a boundary to cross first: each counted by history_count, which crosses it',
    // The next minute: a read of the item crosses its shard's boundary (its snapshot lists the item written
    // the minute before), and no other shard's (their counts are read-only).
    prepare: async (context) => {
      await context.advanceSec(60);
      await context.send({ method: 'GET', path: '/boards/wc-shards/items/i5?window=m' }, 'seeder');
    },
    request: () => ({ method: 'GET', path: '/boards/wc-shards/items/i5/history?window=m' }),
    times: 1,
  },
];

/** Run last, after the admin rows: the clock moved on by IDLE_WEEKS first, every board and counter gone stale. */
export const JOB_ROWS: WorstRow[] = [
  {
    route: 'JOB ranking-expiry',
    worst: `the scheduler's pass after ${IDLE_WEEKS} idle weeks: the due index swept, every harness board claimed, visited (every shard's and metric's windows, segments and likes expired, leagues rolled, take-backs swept) and released`,
    job: 'ranking',
    prepare: idle,
    times: 1,
    open: "#45: no quiet run yet (2026-12-04 19:40, the row alone at load 15-27: 200, 13 475 calls, 2.05 M commands, 349 in one at most, its longest 530 ms wall on a stalled host; a full run, 2026-12-05 03:24 at load 9-17: 15 404 calls, 2.22 M commands, 1 263 in one at most, within WRITE_CALL_COMMANDS since archive_held_lib's prunes take what a call adds and 100 more, where a call of wc-histgroups' two snapshots pruned 2 000 entries in 16 049 commands). wc-cross's listings of 1 000 rows are 7.8-10.1 M instructions inside their FCALLs (8.4-10.9 M before their replaced previous listings were UNLINKed, 2026-12-05 15:37; the 14-16 M noted before counted the server's cron); an expire call costs ~2 M instructions before it drains (wc-rated: 158 calls, 515 M, 4.98 M and 164 commands at most); a visit whose call timed out is due again, not a failure: bench/expire-instructions.ts",
    manyCalls: 'claims of SCHEDULER_CLAIM_BATCH boards, then each board visited in expire calls of its own',
    drains: `each expire call drains at most EXPIRE_CHUNK (${EXPIRE_CHUNK}) fields within the write call's commands; a board still draining is due again`,
  },
  {
    route: 'JOB counters-cleaner',
    worst:
      'the cleaner pass after those weeks: every counter of every precision stale, its slices trimmed and its index entries removed',
    job: 'counters',
    times: 1,
    manyCalls: 'a page of COUNTER_CLEAN_BATCH index entries per call, ended before 2 000 slice fields read',
  },
  {
    route: 'JOB stats-index-pruner',
    worst: 'the pruner pass after those weeks: every stats pair stale, its index entries removed',
    job: 'stats',
    times: 1,
    manyCalls: 'steps of STATS_INDEX_PRUNE_BATCH entries, each a call',
  },
];
