/**
 * Worst-case rows of leagues, run last (the moves row moves the clock a week on): wc-leagues at its
 * maxima (cohorts of LEAGUE_SIZE.max, LEAGUE_TIERS.max tiers, every member promoted), two full cohorts
 * of the lowest tier, then the reads, a placing write, and the lazy rollover a moves read runs.
 */
import {
  LEAGUE_MOVES_CALLS,
  LEAGUE_ROLL_BUDGET_MEMBERS,
  LEAGUE_SIZE,
} from '../../src/ranking/options/leagues/leagues.limits';
import type { HarnessContext, HttpRequest, WorstRow } from './harness-types';

const BOARD = '/boards/wc-leagues';
const WEEK_SEC = 7 * 86_400;
const BATCH = 200;

/** Two full cohorts of the lowest tier, every member a distinct score (each rank a new one). */
async function fillCohorts(context: HarnessContext): Promise<void> {
  const members = 2 * LEAGUE_SIZE.max;
  for (let first = 0; first < members; first += BATCH) {
    const items = Array.from({ length: BATCH }, (_, k) => ({ item: `l${first + k}`, amount: members - first - k }));
    const answer = await context.send({ method: 'POST', path: `${BOARD}/increments`, body: { items } }, 'seeder');
    if (answer.status >= 300) throw new Error(`seeding wc-leagues: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
}

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
    route: 'GET /boards/{board}/leagues/moves',
    worst: `the first read after the period ended, no scheduler run: it rolls as far as a page of ${LEAGUE_SIZE.max} moves needs (each member of two full cohorts moves up)`,
    manyCalls: `at most ${LEAGUE_MOVES_CALLS} rollover steps, each at most ${LEAGUE_ROLL_BUDGET_MEMBERS} members (a cohort of ${LEAGUE_SIZE.max} in parts)`,
    prepare: async (context) => {
      await context.advanceSec(WEEK_SEC);
    },
    request: () => get(`${BOARD}/leagues/moves?limit=${LEAGUE_SIZE.max}`),
  },
];
