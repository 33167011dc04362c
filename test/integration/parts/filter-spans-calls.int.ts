import { SpanTooCostlyError } from '../../../src/common/errors';
import { SPAN_MAX_FIELDS } from '../../../src/ranking/core/ranking.limits';
import { FilteredRead } from '../../../src/ranking/filters/filters.service';
import {
  EXCLUDE_ITEMS_MAX,
  FILTERED_DEPTH_ITEMS,
  GROUP_SCAN_ROWS,
  groupScan,
} from '../../../src/ranking/options/groups/groups.limits';
import { shardOf } from '../../../src/ranking/core/shard-math';
import { FakeClock } from '../../../harness/clock';
import { countedFilteredRead, filteredRows, useFiltersGraph } from '../../support/ranking-graph';

/**
 * Issue #49: POST query with span scans the span's listing (its slots summed, as GET top?span reads
 * them) with the exclusions and perGroup, in as many group_page calls per shard as its rows need
 * (groupScan's rows each over the span span_stage kept for the read, the call reading a shard's last row
 * ending it), and refuses a span holding more than SPAN_MAX_FIELDS fields (422) as top?span
 * does. The calls are counted from the FCALLs Redis ran (SLOWLOG at 0 µs) on a server of the test's own.
 */
const T0 = 1_700_040_000_000;
const OLD = 2_100;
/** A window scan call's rows (groupScan takes them in as many calls over a span): the call that reads a shard's last row ends it. */
const CURRENT = GROUP_SCAN_ROWS;
const OWN_GROUPS = 100;

/** The group_page calls a span listing `items` takes: a shard's rows in calls of groupScan's rows, at least one. */
function scanCalls(items: string[], shards: number): number {
  const held = Array.from({ length: shards }, (_, k) => items.filter((item) => shardOf(item, shards) === k).length);
  return held.reduce((calls, rows) => calls + Math.max(1, Math.ceil(rows / groupScan().scan)), 0);
}

type Entry = { item: string; amount: number; group?: string; actor?: string };

/** The current slot's items, best first: one group's head, then 100 items of a group each. */
const current: Entry[] = Array.from({ length: CURRENT }, (_, n) => ({
  item: `c${n}`,
  amount: CURRENT - n,
  group: n < CURRENT - OWN_GROUPS ? 'big' : `t${n}`,
}));
/** The slot before it: items scoring above every current one, in the window but not in a one-slot span. */
const old: Entry[] = Array.from({ length: OLD }, (_, n) => ({ item: `o${n}`, amount: 10_000 - n, group: 'old' }));

describe('a filtered page of a span (single, own server)', () => {
  const clock = new FakeClock(T0);
  const world = useFiltersGraph('single', clock, { own: true });

  /** In batches of `size` entries (300: within one write call's cost with an actor each). */
  async function write(board: string, entries: Entry[], size = 1000): Promise<void> {
    for (let first = 0; first < entries.length; first += size)
      await world.graph.ranking.incrementBatch(
        world.commands.batch({ board, entries: entries.slice(first, first + size) }),
      );
  }

  /** The old slot's items, then a minute on, the current slot's: read once, uncounted. */
  async function seeded(board: string, shards: number): Promise<void> {
    clock.setMs(T0);
    await world.graph.ranking.putBoard({
      name: board,
      windows: [{ name: 'w', period: 3600, interval: 60 }],
      shards,
      groups: true,
    });
    await write(board, old);
    clock.advanceMs(60_000);
    await write(board, current);
    await world.graph.ranking.top(board, 'w', 0, 1);
  }

  const counted = (ask: FilteredRead) => countedFilteredRead(world, ask);

  it.each([1, 3])(
    '%i shard(s): a one-slot span past 1 000 excluded items, perGroup 1: its ranks, every row of it scanned once',
    async (shards) => {
      const board = `sp${shards}`;
      await seeded(board, shards);
      const excludeItems = Array.from({ length: EXCLUDE_ITEMS_MAX }, (_, n) => `c${n}`);
      const ask = {
        board,
        window: 'w',
        span: '60s',
        offset: 0,
        limit: FILTERED_DEPTH_ITEMS,
        perGroup: 1,
        excludeItems,
      };
      const { page, calls } = await counted(ask);

      // The model: ranked in the span (the old slot's items absent), big's best row left, then a group each.
      const want = [EXCLUDE_ITEMS_MAX, ...Array.from({ length: OWN_GROUPS }, (_, n) => CURRENT - OWN_GROUPS + n)].map(
        (n) => [n + 1, current[n].item, current[n].amount, current[n].group],
      );
      // Each shard's span rows in calls of groupScan's rows, none finding nothing after them.
      expect({ truncated: page.truncated, rows: filteredRows(page), calls }).toEqual({
        truncated: false,
        rows: want,
        calls: scanCalls(
          current.map(({ item }) => item),
          shards,
        ),
      });
      expect(Number(page.to) - Number(page.from)).toBe(60);
      await world.graph.ranking.deleteBoard(board);
    },
    120_000,
  );

  it.each([1, 3])(
    '%i shard(s): minActors over a span counts the actors of its slots alone, its rows scanned as without it',
    async (shards) => {
      const board = `act${shards}`;
      clock.setMs(T0);
      const windows = [{ name: 'w', period: 3600, interval: 60 }];
      await world.graph.ranking.putBoard({ name: board, windows, shards, groups: true, actors: true });
      // The ten best current items each have an actor in the slot before: in the window, not in the span.
      const early = current.slice(0, 10).map(({ item }) => ({ item, amount: 1, actor: 'early' }));
      await write(board, early);
      clock.advanceMs(60_000);
      // Now: the first 1 000 each an actor of their own, the best five a second one.
      const acted = current.map((entry, n) => (n < 1000 ? { ...entry, actor: `a${n}` } : entry));
      const late = current.slice(0, 5).map(({ item }) => ({ item, amount: 1, actor: 'late' }));
      await write(board, [...acted, ...late], 300);
      await world.graph.ranking.top(board, 'w', 0, 1);
      const ask = { board, window: 'w', span: '60s', offset: 0, limit: 20, minActors: 2, excludeItems: ['c2'] };
      const { page, calls } = await counted(ask);
      const want = [0, 1, 3, 4].map((n) => [n + 1, `c${n}`, CURRENT - n + 1, 'big']);
      // A shard's span rows take as many calls with minActors: each row's count is staged with the span.
      expect({ truncated: page.truncated, rows: filteredRows(page), calls }).toEqual({
        truncated: false,
        rows: want,
        calls: scanCalls(
          current.map(({ item }) => item),
          shards,
        ),
      });
      await world.graph.ranking.deleteBoard(board);
    },
    120_000,
  );

  it.each([1, 3])(
    `%i shard(s): a span holding more than SPAN_MAX_FIELDS (${SPAN_MAX_FIELDS}) fields over its shards is a 422, as GET top?span`,
    async (shards) => {
      const board = `costly${shards}`;
      await seeded(board, shards);
      expect(OLD + CURRENT).toBeGreaterThan(SPAN_MAX_FIELDS);
      const ask = { board, window: 'w', span: '120s', offset: 0, limit: 10, excludeItems: ['c0'] };
      await expect(world.filters.read(ask)).rejects.toBeInstanceOf(SpanTooCostlyError);
      await expect(world.graph.ranking.top(board, 'w', 0, 10, { span: '120s' })).rejects.toBeInstanceOf(
        SpanTooCostlyError,
      );
      await world.graph.ranking.deleteBoard(board);
    },
    120_000,
  );
});
