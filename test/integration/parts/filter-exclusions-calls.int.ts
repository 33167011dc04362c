import { FilteredRead } from '../../../src/ranking/filters/filters.service';
import {
  EXCLUDE_GROUPS_MAX,
  EXCLUDE_ITEMS_MAX,
  FILTERED_DEPTH_ITEMS,
  groupScan,
} from '../../../src/ranking/options/groups/groups.limits';
import { FakeClock } from '../../../harness/clock';
import { countedFilteredRead, filteredRows, useFiltersGraph } from '../../support/ranking-graph';

/**
 * Issue #49: a viewer's EXCLUDE_ITEMS_MAX excluded items and EXCLUDE_GROUPS_MAX excluded groups still
 * give a full page of FILTERED_DEPTH_ITEMS rows, in as many scan calls per shard as its rows down to the
 * page's end take (SCAN rows a call, issue #45). The head of the board is
 * all excluded (900 items by id, 100 by their group; 100 more ids are of items not on the board), so the
 * page is the next 1 000 rows at their board ranks. The group_page calls are counted from the FCALLs
 * Redis ran (SLOWLOG at 0 µs) on a server of the test's own. And what the scan does when one group holds
 * the whole head (docs/trending.md, "How deep a read goes"): CALLS calls per shard, then the
 * rows it found, exact and in order, with `truncated: true`. A shard's call applies perGroup itself
 * (counting the rows listed before it), so a group holding most of its listing does not fill its answer.
 */
const T0 = 1_700_020_000_000;
const HEAD = 1_000;
const BY_GROUP = EXCLUDE_GROUPS_MAX;
const PAGE = FILTERED_DEPTH_ITEMS;
const KEPT_GROUPS = 50;
/** Rows one scan call of a shard reads, and the most calls per shard, without minActors. */
const { scan: SCAN, calls: CALLS } = groupScan();

type Entry = { item: string; amount: number; group: string };

/** The board's items, best first: the excluded head, then the page, then 100 rows after it. */
function seedEntries(): Entry[] {
  const head = Array.from({ length: HEAD }, (_, n) => ({
    item: `h${n}`,
    amount: 5_000 - n,
    group: n < HEAD - BY_GROUP ? `k${n % KEPT_GROUPS}` : `g${n - (HEAD - BY_GROUP)}`,
  }));
  const rest = Array.from({ length: PAGE + 100 }, (_, n) => ({
    item: `p${n}`,
    amount: 3_000 - n,
    group: `k${n % KEPT_GROUPS}`,
  }));
  return [...head, ...rest];
}

describe('a filtered page past the most exclusions (single, own server)', () => {
  const clock = new FakeClock(T0);
  const world = useFiltersGraph('single', clock, { own: true });

  /** A board of `entries` (seeded in batches), read once: the read that drains and registers it goes uncounted. */
  async function seeded(board: string, shards: number, entries: Entry[]): Promise<void> {
    await world.graph.ranking.putBoard({
      name: board,
      windows: [{ name: 'w', period: 3600, interval: 60 }],
      shards,
      groups: true,
    });
    for (let first = 0; first < entries.length; first += 1000)
      await world.graph.ranking.incrementBatch(
        world.commands.batch({ board, entries: entries.slice(first, first + 1000) }),
      );
    await world.graph.ranking.top(board, 'w', 0, 1);
  }

  const counted = (ask: FilteredRead) => countedFilteredRead(world, ask);

  it.each([1, 3])(
    `%i shard(s): 1 000 excluded items and 100 excluded groups, a full page of 1 000 rows in calls of ${SCAN} rows`,
    async (shards) => {
      const board = `ex${shards}`;
      const entries = seedEntries();
      await seeded(board, shards, entries);
      const excludeItems = [
        ...Array.from({ length: HEAD - BY_GROUP }, (_, n) => `h${n}`),
        ...Array.from({ length: EXCLUDE_ITEMS_MAX - (HEAD - BY_GROUP) }, (_, n) => `gone${n}`),
      ];
      const excludeGroups = Array.from({ length: BY_GROUP }, (_, n) => `g${n}`);
      const ask = { board, window: 'w', offset: 0, limit: PAGE, excludeItems, excludeGroups };
      const { page, calls } = await counted(ask);

      const want = entries.slice(HEAD, HEAD + PAGE).map((e, n) => [HEAD + n + 1, e.item, e.amount, e.group]);
      expect(excludeItems).toHaveLength(EXCLUDE_ITEMS_MAX);
      expect({ truncated: page.truncated, rows: filteredRows(page), calls }).toEqual({
        truncated: false,
        rows: want,
        // Each shard scanned down to the page's end (its share of the 2 000 rows), a call per SCAN rows.
        calls: shards * Math.ceil((HEAD + PAGE) / shards / SCAN),
      });
      await world.graph.ranking.deleteBoard(board);
    },
    120_000,
  );

  /**
   * A board whose `head` best rows are of one group, then `singles` rows of a group each, read with
   * perGroup 1 and limit `singles`: the page, its group_page calls, and the model's page (the group's
   * best row, then every other group's).
   */
  async function oneGroupHead(board: string, shards: number, head: number, singles: number) {
    const entries = [
      ...Array.from({ length: head }, (_, n) => ({ item: `b${n}`, amount: 50_000 - n, group: 'big' })),
      ...Array.from({ length: singles }, (_, n) => ({ item: `t${n}`, amount: 10_000 - n, group: `t${n}` })),
    ];
    await seeded(board, shards, entries);
    const { page, calls } = await counted({ board, window: 'w', offset: 0, limit: singles, perGroup: 1 });
    await world.graph.ranking.deleteBoard(board);
    const model = [
      [1, 'b0', 50_000, 'big'],
      ...entries.slice(head, head + singles - 1).map((e, n) => [head + n + 1, e.item, e.amount, e.group]),
    ];
    return { truncated: page.truncated, rows: filteredRows(page), calls, model };
  }

  it.each([1, 3])(
    `%i shard(s): perGroup 1 past a group of ${SCAN - 30} rows: a full page in one group_page call per shard (the shard skips the capped rows)`,
    async (shards) => {
      // Fewer rows on any shard than one call scans, most of them of one group.
      const { model, ...read } = await oneGroupHead(`cap${shards}`, shards, SCAN - 30, 20);
      expect(read).toEqual({ truncated: false, rows: model, calls: shards });
    },
    120_000,
  );

  it.each([1, 3])(
    `%i shard(s): perGroup 1 while one group holds the whole scanned head: ${CALLS} calls a shard, the rows found, truncated`,
    async (shards) => {
      // More of one group than CALLS scans of SCAN rows reach on any shard, then a group each.
      const head = (SCAN * CALLS + 500) * shards;
      const { model, ...read } = await oneGroupHead(`one${shards}`, shards, head, PAGE);
      // The read answers the model page's start.
      expect(read).toEqual({
        truncated: true,
        rows: model.slice(0, read.rows.length),
        calls: CALLS * shards,
      });
      expect(read.rows.length).toBeGreaterThanOrEqual(1);
    },
    120_000,
  );
});
