/**
 * write-instructions.ts's rows of coalesced increments on boards without moderation (issue #45): what one
 * call of requests of existing items runs as its board's windows, views and options grow, the calls the
 * coalescer forms weighed by write-cost.ts's coalescedWork. The bench runs under a bound past any
 * (WRITE_COST_PER_CALL), so each row is one call of the requests it names: one request (the call's own
 * part), the call the default bound formed before (entryWork, at most MAX_COALESCED_INCREMENTS) and the
 * one it forms now (coalescedWork).
 */
import { EIGHT_ROLLING_WINDOWS } from '../harness/worst-case/boards';
import { type RankingGraph } from '../harness/compose-ranking';
import { validateConfig } from '../src/common/config';
import { coalescedWork, entryWork, type CostedBoard } from '../src/ranking/core/write-cost';
import { MAX_COALESCED_INCREMENTS } from '../src/ranking/core/ranking.limits';

/** An increment of the bench's graph (write-instructions.ts's Increment). */
type Increment = (fields: { board: string; item: string; amount: number }) => Promise<unknown>;
type Rows = Array<[string, () => Promise<unknown>]>;

/** Eight views of every mode a board without actors may declare. */
const EIGHT_VIEWS = [
  { name: 'fading', mode: 'decay', window: 'm', halfLife: '30m' },
  { name: 'daily', mode: 'decay', window: 'h', halfLife: '2h' },
  { name: 'weekly', mode: 'decay', window: 'wk', halfLife: '12h' },
  { name: 'hot', mode: 'hot', window: 'h', tau: '12h' },
  { name: 'hotm', mode: 'hot', window: 'm' },
  { name: 'hots', mode: 'hot', window: 'six', tau: '1h' },
  { name: 'rising', mode: 'rising', window: 'h', baseline: 'mo' },
  { name: 'risingm', mode: 'rising', window: 'six', baseline: 'h' },
];

/**
 * The boards beside `plain` (1 window): wc-sum's declaration unmoderated; 8 windows, alone (the plain path), with
 * 8 views, with ties first, with an item cap (increment.lua's general path, as any keyed request's call).
 */
const BOARDS: Record<string, string> = {
  views8: '8 windows 8 views, ties first, snapshots, capped actors',
  windows8: '8 windows',
  bareviews8: '8 windows 8 views',
  ties8: '8 windows, ties first',
  capped8: '8 windows, maxItems',
};

/** Stores the boards (`putSum`: wc-sum's declaration under the given name) and seeds each one's existing items. */
export async function seedCoalescedBoards(
  graph: RankingGraph,
  putSum: (name: string) => Promise<void>,
  seedItems: (board: string) => Promise<void>,
): Promise<void> {
  await putSum('views8');
  const windows = EIGHT_ROLLING_WINDOWS;
  await graph.ranking.putBoard({ name: 'windows8', windows });
  await graph.ranking.putBoard({ name: 'bareviews8', windows, views: EIGHT_VIEWS });
  await graph.ranking.putBoard({ name: 'ties8', windows, ties: 'first' });
  await graph.ranking.putBoard({ name: 'capped8', windows, maxItems: 100_000_000 });
  for (const board of Object.keys(BOARDS)) await seedItems(board);
}

/**
 * How many plain requests of `board` the coalescer put in one call under the default bound before and now
 * (undefined: the board is not seeded, as WRITE_BENCH_ROWS chose).
 */
async function perCall(graph: RankingGraph, board: string): Promise<{ before: number; now: number } | undefined> {
  const config: CostedBoard | undefined = await graph.boards.loadBoard(board);
  if (config === undefined) return undefined;
  const bound = validateConfig({}).WRITE_COST_PER_CALL;
  const within = (work: number) => Math.min(MAX_COALESCED_INCREMENTS, Math.max(1, Math.floor(bound / work)));
  return { before: within(entryWork({}, config)), now: within(coalescedWork({}, config)) };
}

/** One call of `count` concurrent increments of existing mid-table items. */
const together = (increment: Increment, board: string, count: number) => () =>
  Promise.all(Array.from({ length: count }, (_, k) => increment({ board, item: `i${1000 + k}`, amount: 1 })));

/** The label of each board's one-request row: WRITE_BENCH_ROWS seeds the coalesced boards where it selects one. */
export const coalescedLabels = () =>
  Object.entries({ ...BOARDS, plain: '1 window' }).map(
    ([board, shape]) => `coalesced: 1 existing items, ${shape} (${board})`,
  );

export async function coalescedRows(graph: RankingGraph, increment: Increment): Promise<Rows> {
  const rows: Rows = [];
  for (const [board, shape] of Object.entries({ ...BOARDS, plain: '1 window' })) {
    const calls = await perCall(graph, board);
    if (calls === undefined) continue;
    const { before, now } = calls;
    const row = (count: number, what: string) =>
      rows.push([`coalesced: ${count} existing items, ${shape}${what} (${board})`, together(increment, board, count)]);
    row(1, '');
    row(before, ': a call before');
    if (now !== before) row(now, ': a call now');
  }
  return rows;
}
