import type Redis from 'ioredis';
import { SpanReadsBusyError } from '../../../src/common/errors';
import {
  MIN_ACTORS,
  SPAN_MAX_FIELDS,
  SPAN_STAGE_FIELDS_PER_CALL,
  SPAN_STAGED_READS_PER_SHARD,
} from '../../../src/ranking/core/ranking.limits';
import { EXCLUDE_ITEMS_MAX, GROUP_SCAN_ROWS, groupScan } from '../../../src/ranking/options/groups/groups.limits';
import { FakeClock } from '../../../harness/clock';
import { FiltersStore } from '../../../src/ranking/filters/filters.store';
import type { FilteredPage } from '../../../src/ranking/filters/filters.service';
import { useFiltersGraph } from '../../support/ranking-graph';

/**
 * Issue #45: no call of a filtered read over a span sums or sorts the whole span, nor reads more than
 * a span's scan call of a window's listing with minActors (each row's actor count read beside it). The proxy for a
 * call's Redis instructions (bench/span-filter-instructions.ts measures them) is what it reads of the
 * span: the fields of every slot or contribution hash it reads whole (HGETALL, HKEYS), the fields it asks
 * of one by HSCAN, and the rows it reads of a listing (ZRANGE); a window's scan without minActors reads
 * at most a quarter of GROUP_SCAN_ROWS a call too (a plain row ~14 k instructions). Read from MONITOR, where the commands a
 * function runs follow the FCALL that ran them (Redis 7.0), on the test's own server. The board is the worst
 * case's (wc-spanactors): a span of the whole window holding SPAN_MAX_FIELDS slot fields and
 * contributions, over its 60 slots.
 */
const T0 = 1_700_050_000_020;
const ITEMS = GROUP_SCAN_ROWS + 1;
/** Places of the window read's items with three actors: each in a scan call of its own. */
const DEEP = [300, 700, 1200, 1900];
/** Redis's hash-max-listpack-entries (the default): HSCAN answers such a hash whole, whatever its COUNT. */
const LISTPACK_ENTRIES = 128;
/** The merged board's items, each written in SPREAD slots (within SPAN_MAX_FIELDS). */
const RECURRING = 1200;
const SPREAD = 3;
/** Most commands a staging call runs: its reads of the board and state, a few per slot copy, a few writes. */
const STAGE_CALL_COMMANDS = 40;

/** The fields one HSCAN asked `count` answers of a hash of `size` (a small hash whole, else about the count). */
const scanned = (size: number, count: number) => (size <= LISTPACK_ENTRIES ? size : Math.min(count, size));

/** A command Redis ran, as MONITOR shows it. */
interface Seen {
  args: string[];
  source: string;
}

/** The commands each FCALL ran (those MONITOR showed after it, before the next command sent), by the function's name. */
function byCall(seen: Seen[]): Array<{ name: string; ran: string[][] }> {
  const calls: Array<{ name: string; ran: string[][] }> = [];
  for (const { args, source } of seen) {
    if (source === 'lua') calls[calls.length - 1]?.ran.push(args);
    else if (/^fcall/i.test(args[0])) calls.push({ name: args[1], ran: [] });
  }
  return calls;
}

describe('a filtered read over a span, or with minActors, call by call (single, own server)', () => {
  const clock = new FakeClock(T0);
  const world = useFiltersGraph('single', clock, { own: true });

  /** The read's commands, by FCALL. */
  async function monitored(read: () => Promise<unknown>): Promise<Array<{ name: string; ran: string[][] }>> {
    const monitor = await (world.redis.client as Redis).monitor();
    const seen: Seen[] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => seen.push({ args, source }));
    await read();
    // A command MONITOR has shown once the PING after it answered.
    await (world.redis.client as Redis).ping();
    await new Promise<void>((resolve) => setImmediate(resolve));
    await monitor.disconnect();
    return byCall(seen);
  }

  it(`minActors ${MIN_ACTORS.max} over a span of ${SPAN_MAX_FIELDS} fields and contributions: each call reads at most ${SPAN_STAGE_FIELDS_PER_CALL} of them, or ${groupScan().scan} rows`, async () => {
    const board = 'bound';
    const windows = [{ name: 'm', period: '1h', interval: '1m' }];
    await world.graph.ranking.putBoard({ name: board, windows, groups: true, actors: true });
    const nowSec = Math.floor(T0 / 1000);
    const entries = Array.from({ length: ITEMS }, (_, n) => ({
      item: `i${n}`,
      amount: ITEMS - n,
      at: nowSec - (n % 60) * 60,
      group: n < ITEMS - 100 ? 'g0' : `g${ITEMS - n}`,
      ...(n < SPAN_MAX_FIELDS - ITEMS ? { actor: `a${n}` } : {}),
    }));
    for (let first = 0; first < ITEMS; first += 200)
      await world.graph.ranking.incrementBatch(
        world.commands.batch({ board, entries: entries.slice(first, first + 200) }),
      );
    const node = world.redis.client as Redis;
    const ask = { board, window: 'm', span: '60m', offset: 0, limit: 1000, perGroup: 1, minActors: MIN_ACTORS.max };
    const calls = await monitored(() => world.filters.read(ask));
    // A hash read whole weighs its fields, one scanned what HSCAN answers of it (a copy holds
    // those of the live hash it copied: the live slots and contributions are unchanged by now).
    const sizes = new Map<string, number>();
    for (const { ran } of calls)
      for (const [command, key, copy] of ran) {
        if (/^(hgetall|hkeys)$/i.test(command)) sizes.set(key, await node.hlen(key));
        if (/^copy$/i.test(command)) sizes.set(copy, await node.hlen(key));
      }
    const read = calls.map(({ ran }) => ({
      fields: ran.reduce((sum, [command, key, ...rest]) => {
        if (/^(hgetall|hkeys)$/i.test(command)) return sum + (sizes.get(key) ?? 0);
        if (/^hscan$/i.test(command)) return sum + scanned(sizes.get(key) ?? 0, Number(rest[2]));
        return sum;
      }, 0),
      // The rows a call reads of the staged listing.
      rows: ran.reduce(
        (sum, [command, key, from, to]) =>
          /^zrange$/i.test(command) && key.endsWith(':sums') ? sum + Number(to) - Number(from) + 1 : sum,
        0,
      ),
    }));
    const costliest = {
      fields: Math.max(...read.map((call) => call.fields)),
      rows: Math.max(...read.map((call) => call.rows)),
    };
    // A call's last HSCAN may take a small hash (at most LISTPACK_ENTRIES fields) whole past its budget.
    expect(costliest.fields).toBeLessThanOrEqual(SPAN_STAGE_FIELDS_PER_CALL + LISTPACK_ENTRIES);
    expect(costliest.rows).toBeLessThanOrEqual(groupScan().scan);
    // Yet the span is read whole over the read's calls.
    expect(read.reduce((sum, call) => sum + call.fields, 0)).toBeGreaterThanOrEqual(SPAN_MAX_FIELDS);
  }, 120_000);

  it(`a span whose items recur over its slots, staged in calls of ${SPAN_STAGE_FIELDS_PER_CALL} fields: a few commands a call (not one a field), its page as GET top?span sums it`, async () => {
    const board = 'merged';
    await world.graph.ranking.putBoard({ name: board, windows: [{ name: 'm', period: '1h', interval: '1m' }] });
    const nowSec = Math.floor(T0 / 1000);
    // Every item in SPREAD slots, some of its amounts negative: items summed over several staging calls, some at or below 0.
    const entries = Array.from({ length: SPREAD * RECURRING }, (_, k) => {
      const n = k % RECURRING;
      const amount = ((n * 7 + k) % 11) - 3 || 5;
      return { item: `r${n}`, amount, at: nowSec - Math.floor(k / RECURRING) * 60 };
    });
    for (let first = 0; first < entries.length; first += 1000)
      await world.graph.ranking.incrementBatch(
        world.commands.batch({ board, entries: entries.slice(first, first + 1000) }),
      );
    const ask = { board, window: 'm', span: '60m', offset: 0, limit: 1000, excludeItems: ['absent'] };
    let page: FilteredPage | undefined;
    const calls = await monitored(async () => (page = await world.filters.read(ask)));
    const staging = calls.filter(({ name }) => name.endsWith('span_stage'));
    expect(staging.length).toBeGreaterThan(Math.ceil((SPREAD * RECURRING) / SPAN_STAGE_FIELDS_PER_CALL));
    expect(Math.max(...staging.map(({ ran }) => ran.length))).toBeLessThanOrEqual(STAGE_CALL_COMMANDS);
    const want = await world.graph.ranking.top(board, 'm', 0, 1000, { span: '60m' });
    expect(page?.items.map(({ rank, item, score }) => [rank, item, score])).toEqual(
      want.items.map(({ rank, item, score }) => [rank, item, score]),
    );
  }, 120_000);

  it(`minActors ${MIN_ACTORS.max} on a window of ${ITEMS} items with actors: each call reads at most ${groupScan().scan} rows and their actor counts, resuming where the last one stopped`, async () => {
    const board = 'windowed';
    await world.graph.ranking.putBoard({
      name: board,
      windows: [{ name: 'm', period: '1h', interval: '1m' }],
      actors: true,
    });
    // Each item its place's score, from one actor; the DEEP ones from three (the same score in all).
    const entries = Array.from({ length: ITEMS }, (_, n) =>
      DEEP.includes(n)
        ? [`a${n}`, `b${n}`, `c${n}`].map((actor, k) => ({ item: `i${n}`, amount: k === 0 ? ITEMS - n - 2 : 1, actor }))
        : [{ item: `i${n}`, amount: ITEMS - n, actor: `a${n}` }],
    ).flat();
    for (let first = 0; first < entries.length; first += 200)
      await world.graph.ranking.incrementBatch(
        world.commands.batch({ board, entries: entries.slice(first, first + 200) }),
      );
    const ask = { board, window: 'm', offset: 0, limit: 1000, minActors: MIN_ACTORS.max };
    let page: FilteredPage | undefined;
    const calls = await monitored(async () => (page = await world.filters.read(ask)));
    const scans = calls.filter(({ name }) => name.endsWith('group_page'));
    const read = scans.map(({ ran }) => ({
      // The listing's rows the call read (the window's results, best first), and the counts it asked.
      rows: ran.reduce(
        (sum, [command, key, from, to]) =>
          /^zrevrange$/i.test(command) && key.endsWith(':top') ? sum + Number(to) - Number(from) + 1 : sum,
        0,
      ),
      counts: ran.reduce(
        (sum, [command, key, ...fields]) =>
          /^hmget$/i.test(command) && key.endsWith(':pairs') ? sum + fields.length : sum,
        0,
      ),
    }));
    expect(Math.max(...read.map((call) => call.rows))).toBeLessThanOrEqual(groupScan().scan);
    expect(Math.max(...read.map((call) => call.counts))).toBeLessThanOrEqual(groupScan().scan);
    // Yet the whole listing is read once over the calls, and no item has that many actors.
    expect(read.reduce((sum, call) => sum + call.counts, 0)).toBe(ITEMS);
    expect(page).toMatchObject({ items: [], truncated: false });
  }, 120_000);

  it(`finds the items with minActors spread over those calls, exact, at their board ranks`, async () => {
    const ask = { board: 'windowed', window: 'm', offset: 0, limit: 10, minActors: 3 };
    const page = await world.filters.read(ask);
    expect(page.items.map(({ item, rank }) => [item, rank])).toEqual(DEEP.map((n) => [`i${n}`, n + 1]));
    expect(page.truncated).toBe(false);
    const middle = await world.filters.read({ ...ask, offset: 1, limit: 2 });
    expect(middle.items.map(({ item }) => item)).toEqual(DEEP.slice(1, 3).map((n) => `i${n}`));
  });

  it(`exclusions without minActors on that window: each call reads at most ${groupScan().scan} rows, the page exact at its board ranks`, async () => {
    const excludeItems = Array.from({ length: EXCLUDE_ITEMS_MAX }, (_, n) => `i${n}`);
    const ask = { board: 'windowed', window: 'm', offset: 0, limit: 1000, excludeItems };
    let page: FilteredPage | undefined;
    const calls = await monitored(async () => (page = await world.filters.read(ask)));
    const rows = calls
      .filter(({ name }) => name.endsWith('group_page'))
      .map(({ ran }) =>
        ran.reduce(
          (sum, [command, key, from, to]) =>
            /^zrevrange$/i.test(command) && key.endsWith(':top') ? sum + Number(to) - Number(from) + 1 : sum,
          0,
        ),
      );
    expect(Math.max(...rows)).toBeLessThanOrEqual(groupScan().scan);
    // The page past the excluded head reads the listing down to its end, over the calls.
    expect(rows.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(EXCLUDE_ITEMS_MAX + 1000);
    const want = Array.from({ length: 1000 }, (_, k) => [`i${EXCLUDE_ITEMS_MAX + k}`, EXCLUDE_ITEMS_MAX + k + 1]);
    expect(page?.items.map(({ item, rank }) => [item, rank])).toEqual(want);
    expect(page?.truncated).toBe(false);
  }, 120_000);

  it(`leaves no staged key behind, and holds at most ${SPAN_STAGED_READS_PER_SHARD} staged reads on a shard's window at once`, async () => {
    const node = world.redis.client as Redis;
    expect(await node.keys('*:staged*')).toEqual([]);
    const [slots] = await node.keys('*bound*:m:slots');
    const registry = slots.replace(/slots$/, 'staged');
    const others = (lapse: number) =>
      Array.from({ length: SPAN_STAGED_READS_PER_SHARD }, (_, n) => [lapse, `other${n}`]).flat();
    const ask = { board: 'bound', window: 'm', span: '60m', offset: 0, limit: 10, minActors: 1 };
    // As many reads of other instances in progress as a shard's window holds: one more is refused.
    await node.zadd(registry, ...others(T0 + 1));
    await expect(world.filters.read(ask)).rejects.toBeInstanceOf(SpanReadsBusyError);
    expect(await node.zcard(registry)).toBe(SPAN_STAGED_READS_PER_SHARD);
    // Once they lapse (their instance stopped before dropping them) their places are free again.
    await node.zadd(registry, ...others(T0));
    const page = await world.filters.read(ask);
    expect(page.items.length).toBe(10);
    expect(await node.keys('*:staged*')).toEqual([]);
  });

  it('answers a read that outlived its staged sums a 503 SPAN_READS_BUSY, not a 500', async () => {
    const node = world.redis.client as Redis;
    const store = world.graph.module.get(FiltersStore);
    const scan = store.scan.bind(store);
    // The staged keys lapse between the staging and the scan, as SPAN_STAGE_TTL_MS would end them.
    store.scan = async (...args: Parameters<FiltersStore['scan']>) => {
      const staged = await node.keys('*:staged:*');
      if (staged.length > 0) await node.del(...staged);
      return scan(...args);
    };
    const ask = { board: 'bound', window: 'm', span: '60m', offset: 0, limit: 10, perGroup: 1 };
    try {
      await expect(world.filters.read(ask)).rejects.toBeInstanceOf(SpanReadsBusyError);
    } finally {
      store.scan = scan;
    }
    expect(await node.keys('*:staged*')).toEqual([]);
  });
});
