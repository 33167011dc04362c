/**
 * Worst-case rows of leagues, run last (the first moves row moves the clock a week on, for both boards): wc-leagues at its
 * maxima (cohorts of LEAGUE_SIZE.max, LEAGUE_TIERS.max tiers, every member promoted), two full cohorts
 * of the lowest tier, then the reads, a placing write, and the lazy rollover a moves read runs; then
 * the sharded shape on wc-leagues64 (the same leagues on SHARDS_PER_BOARD.max shards): a full batch of
 * new items placed by each shard's call, a standing read, and a moves page rolling shard after shard.
 */
import {
  LEAGUE_MOVES_CALLS,
  LEAGUE_ROLL_BUDGET_UNITS,
  LEAGUE_SIZE,
  leagueMovesCalls,
} from '../../src/ranking/options/leagues/leagues.limits';
import { BATCH_ENTRIES, SHARDS_PER_BOARD } from '../../src/ranking/core/ranking.limits';
import type { HarnessContext, HttpRequest, WorstRow } from './harness-types';

const BOARD = '/boards/wc-leagues';
const SHARDED = '/boards/wc-leagues64';
const WEEK_SEC = 7 * 86_400;
/** Seeding batches within the write bound of one shard (an entry 10 units: window, `ties: first`, placement). */
const BATCH = 150;

/** Two full cohorts of the lowest tier, every member a distinct score (each rank a new one). */
async function fillCohorts(context: HarnessContext, board = BOARD, members = 2 * LEAGUE_SIZE.max): Promise<void> {
  for (let first = 0; first < members; first += BATCH) {
    const length = Math.min(BATCH, members - first);
    const items = Array.from({ length }, (_, k) => ({ item: `l${first + k}`, amount: members - first - k }));
    const answer = await context.send({ method: 'POST', path: `${board}/increments`, body: { items } }, 'seeder');
    if (answer.status >= 300) throw new Error(`seeding ${board}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
}

/** A full batch of items new to the sharded leagues board (fresh ids each time, however often measured). */
let batches = 0;
const newcomers = () => {
  batches++;
  return Array.from({ length: BATCH_ENTRIES.max }, (_, k) => ({ item: `n${batches}-${k}`, amount: k + 1 }));
};

const get = (path: string): HttpRequest => ({ method: 'GET', path });

export const LEAGUE_ROWS: WorstRow[] = [
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst: `a leagues board: the item's first event of the period places it (a third cohort opens beside two full ones of ${LEAGUE_SIZE.max})`,
    prepare: fillCohorts,
    caller: 'seeder',
    request: () => ({ method: 'POST', path: `${BOARD}/items/newcomer/increment`, body: { amount: 1 } }),
  },
  {
    route: 'GET /boards/{board}/items/{item}/league',
    worst: `an item of a full cohort (${LEAGUE_SIZE.max} members)`,
    request: () => get(`${BOARD}/items/l1500/league`),
  },
  {
    route: 'GET /boards/{board}/leagues/{tier}/{cohort}',
    worst: `a whole full cohort (${LEAGUE_SIZE.max} rows, every score distinct)`,
    request: () => get(`${BOARD}/leagues/t1/1?limit=${LEAGUE_SIZE.max}`),
  },
  {
    route: 'GET /boards/{board}/items/{item}/league',
    worst: `an item of a leagues board of ${SHARDS_PER_BOARD.max} shards, its items seeded: one call on its shard`,
    prepare: (context) => fillCohorts(context, SHARDED, context.sizes.items),
    request: () => get(`${SHARDED}/items/l1/league`),
  },
  {
    route: 'POST /boards/{board}/increments',
    worst: `${BATCH_ENTRIES.max} items new to that board: each shard's one call places its share`,
    manyCalls: `a batch is one call per shard (${SHARDS_PER_BOARD.max}), each placing its share of the items`,
    caller: 'seeder',
    request: () => ({ method: 'POST', path: `${SHARDED}/increments`, body: { items: newcomers() } }),
  },
  {
    route: 'GET /boards/{board}/leagues/moves',
    worst: `the first read after the period ended, no scheduler run: it rolls as far as a page of ${LEAGUE_SIZE.max} moves needs (each member of two full cohorts moves up)`,
    manyCalls: `at most ${LEAGUE_MOVES_CALLS} rolling calls, each one step of about ${LEAGUE_ROLL_BUDGET_UNITS} units (a cohort of ${LEAGUE_SIZE.max} in parts) and the rows its units left room for`,
    prepare: async (context) => {
      await context.advanceSec(WEEK_SEC);
    },
    request: () => get(`${BOARD}/leagues/moves?limit=${LEAGUE_SIZE.max}`),
  },
  {
    route: 'GET /boards/{board}/leagues/moves',
    worst: `that board's first read after the period ended (the week the row before moved on), no scheduler run: a page of ${LEAGUE_SIZE.max} moves rolled shard after shard (every member moves up)`,
    manyCalls: `at most ${LEAGUE_MOVES_CALLS} rolling calls (a shard whose rollover fits a step of ${LEAGUE_ROLL_BUDGET_UNITS} units rolled and read in one) and one read per shard: at most ${leagueMovesCalls(SHARDS_PER_BOARD.max)} calls, each a read of the client's budget`,
    request: () => get(`${SHARDED}/leagues/moves?limit=${LEAGUE_SIZE.max}`),
  },
];
