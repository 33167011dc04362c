import type { PreparedBoard, ShardKeys } from '../core/board';
import type { HistoryPoint, ScoredItem } from '../core/ranking.types';
import {
  ARCHIVE_METRIC_CALLS_PER_READ,
  ARCHIVE_METRIC_UNITS_PER_READ,
  LISTING_BOUNDARY_UNITS,
} from '../core/ranking.limits';
import { shardOf } from '../core/shard-math';
import type { WindowConfig } from '../core/window-math';
import type { ListingAsk, ListingCount, ShardAsked } from './history.functions';
import type { HistoryStore } from './history.store';
import { listingCalls, listingCountsOf, listingUnits, type NodesOf } from './listing-counts';

/**
 * The `metrics` of kept rows on a board of several metrics: every metric's count of the row's item at
 * the listing's boundary as that metric's own listing at the same boundary kept it (each metric is a
 * board of its own: its windows keep their listings at the same boundaries), as a history row's:
 * the ranked metric's is the row's score; another's is its listing's score of the item when the item
 * is among its `top` rows, 0 when that listing holds fewer than `top` rows and not the item; the metric
 * is absent when its listing is full without the item or has none at that boundary.
 */
export type MetricCounts = Record<string, number>;

/** A read of a board with metrics, for its rows' `metrics`. */
export interface MetricsRead {
  board: PreparedBoard;
  window: WindowConfig;
  nowMs: number;
  /** The ranked metric (undefined: the first). */
  metric?: string;
  /** Charges the caller the calls made here, one read each (throws when its budget lacks them). */
  admit?: (reads: number) => void;
}

/** The rows answered of one kept archive (the ranked metric's), at its period's start. */
export interface ArchiveRows {
  atSec: number;
  rows: ScoredItem[];
}

/** Another metric's counts of a page's rows, and which archives keep a record (false: kept before records were). */
interface MetricArchives {
  recorded: boolean[];
  counts: Array<Array<number | undefined>>;
}

/**
 * Each archive row's `metrics` (undefined for every row of an archive some metric keeps without a
 * record: kept before records were). Per other metric: one call on each shard holding a row's item
 * (its record's count, HMGET), and on a sharded board one on every shard (the rows ahead of each
 * found count there, and the listing's rows): each charged as a read; none past the read's bound
 * (metricCalls): `counts` then covers the pages' first rows that fit (fittingPages: fewer pages, the
 * last with fewer rows), and the caller answers those. draining: an archive of another metric is
 * still being taken (the read is sent again, as one of that metric would be).
 */
export async function archiveMetrics(
  store: HistoryStore,
  read: MetricsRead,
  pages: ArchiveRows[],
): Promise<{ draining: boolean; counts: Array<Array<MetricCounts | undefined>> }> {
  const names = read.board.config.metrics ?? [];
  const none = pages.map((page) => page.rows.map((): MetricCounts | undefined => undefined));
  if (names.length < 2 || pages.every((page) => page.rows.length === 0)) return { draining: false, counts: none };
  const ranked = read.metric ?? names[0];
  const others = names.filter((name) => name !== ranked);
  const nodesOf: NodesOf = (shards) => store.shardsByNode(shards);
  const fitting = fittingPages(read.board, pages, others.length, nodesOf);
  const homes = homeAsks(read.board, fitting);
  read.admit?.(metricCalls(read.board, fitting, homes, others.length, nodesOf) ?? 0);
  const known = await Promise.all(others.map((name) => metricArchives(store, read, name, fitting, homes)));
  if (known.some((metric) => metric === undefined)) return { draining: true, counts: [] };
  const counts = fitting.map((page, p) => {
    if (known.some((metric) => !metric!.recorded[p])) return none[p].slice(0, page.rows.length);
    return page.rows.map((row, r) => {
      const metrics: MetricCounts = {};
      for (const name of names) {
        const count = name === ranked ? row.score : known[others.indexOf(name)]!.counts[p][r];
        if (count !== undefined) metrics[name] = count;
      }
      return metrics;
    });
  });
  return { draining: false, counts };
}

/**
 * The most of `pages` (whole pages, then the first rows of the next) whose other metrics' counts fit
 * the read's bound (metricCalls): all of them, else the largest such cut, at least the first row (one
 * row of one page fits on every board: see ARCHIVE_METRIC_UNITS_PER_READ), its shards served as `nodesOf` groups them.
 */
export function fittingPages(
  board: PreparedBoard,
  pages: ArchiveRows[],
  others: number,
  nodesOf: NodesOf,
): ArchiveRows[] {
  const fits = (cut: ArchiveRows[]) => metricCalls(board, cut, homeAsks(board, cut), others, nodesOf) !== undefined;
  if (fits(pages)) return pages;
  let [most, fewer] = [1, pages.reduce((sum, page) => sum + page.rows.length, 0)];
  while (fewer - most > 1) {
    const middle = Math.floor((most + fewer) / 2);
    if (fits(firstRows(pages, middle))) most = middle;
    else fewer = middle;
  }
  return firstRows(pages, most);
}

/** The pages holding the first `rows` rows of `pages` (at least one), the last one's cut to them. */
function firstRows(pages: ArchiveRows[], rows: number): ArchiveRows[] {
  const cut: ArchiveRows[] = [];
  for (let before = 0, p = 0; p < pages.length && before < rows; p++) {
    cut.push({ atSec: pages[p].atSec, rows: pages[p].rows.slice(0, rows - before) });
    before += pages[p].rows.length;
  }
  return cut;
}

/** Per shard (by index) holding a row's item: what to ask it of each page (the items it holds). */
function homeAsks(board: PreparedBoard, pages: ArchiveRows[]): Map<number, ListingAsk[]> {
  const homes = new Map<number, ListingAsk[]>();
  const shards = board.shards.length;
  for (const [p, page] of pages.entries()) {
    for (const { item } of page.rows) {
      const home = shardOf(item, shards);
      if (!homes.has(home)) {
        homes.set(
          home,
          pages.map((each) => ({ atSec: each.atSec, items: [], rows: [], rankItems: board.sharded })),
        );
      }
      homes.get(home)![p].items.push(item);
    }
  }
  return homes;
}

/**
 * The calls the other metrics' counts take, or undefined past the read's bound. Per other metric: the
 * calls of the shards holding a row's item and, on a sharded board, of every shard counting the rows
 * ahead (each shard asked of every row), as listingCountsOf sends them (listingCalls: each shard's asks
 * in pieces of at most LISTING_UNITS_PER_CALL units, a sharded board's packed by the node serving them,
 * `nodesOf`, LISTING_SHARDS_PER_CALL pieces a call at most). A one-shard board's page is answered within
 * ARCHIVE_METRIC_CALLS_PER_READ calls; a sharded board's within as many calls of one shard each, or else
 * within ARCHIVE_METRIC_UNITS_PER_READ units.
 */
function metricCalls(
  board: PreparedBoard,
  pages: ArchiveRows[],
  homes: Map<number, ListingAsk[]>,
  others: number,
  nodesOf: NodesOf,
) {
  const homeAsked = [...homes].map(([shard, asked]) => ({ shard: board.shards[shard], asked }));
  const homeCalls = listingCalls(board.sharded, homeAsked, nodesOf);
  if (!board.sharded) return homeCalls * others > ARCHIVE_METRIC_CALLS_PER_READ ? undefined : homeCalls * others;
  const rows = pages.reduce((sum, page) => sum + page.rows.length, 0);
  const aheadUnits = pages.length * LISTING_BOUNDARY_UNITS + rows;
  const units =
    [...homes.values()].reduce((sum, asked) => sum + listingUnits(asked), 0) + board.shards.length * aheadUnits;
  const shardCalls = homes.size + board.shards.length;
  if (shardCalls * others > ARCHIVE_METRIC_CALLS_PER_READ && units * others > ARCHIVE_METRIC_UNITS_PER_READ) return;
  const aheadAsked = pages.map((page) => ({ atSec: page.atSec, items: [], rows: page.rows, rankItems: false }));
  const aheadCalls = listingCalls(
    true,
    board.shards.map((shard) => ({ shard, asked: aheadAsked })),
    nodesOf,
  );
  return others * (homeCalls + aheadCalls);
}

/** One other metric's counts of the pages' rows (see archiveMetrics); undefined while draining. */
async function metricArchives(
  store: HistoryStore,
  read: MetricsRead,
  name: string,
  pages: ArchiveRows[],
  homes: Map<number, ListingAsk[]>,
): Promise<MetricArchives | undefined> {
  const { board, window, nowMs } = read;
  const metricBoard = board.metric(name);
  const ask = (asks: ShardAsked[]) => listingCountsOf({ store, board: metricBoard, window, nowMs }, asks);
  const homeAsked = [...homes].map(([shard, asked]) => ({ shard: metricBoard.shards[shard], asked }));
  const first = await ask(homeAsked);
  if (first.draining) return undefined;
  const found = pages.map(() => new Map<string, { row: ScoredItem; ahead: number }>());
  const listings: ListingCount[][] = pages.map(() => []);
  homeAsked.forEach(({ asked }, h) => {
    first.counts[h].forEach((count, p) => {
      asked[p].items.forEach((item, i) => {
        const row = count.values[i];
        if (row) found[p].set(item, { row, ahead: Math.max(0, count.ahead[i]) });
      });
      if (!board.sharded) listings[p].push(count);
    });
  });
  if (board.sharded && !(await aheadElsewhere(pages, found, listings, ask, metricBoard.shards))) return undefined;
  return archiveCounts(pages, found, listings, window.snapshots?.top ?? 0);
}

/** A metric's counts of the pages' rows from what its shards answered (see archiveMetrics). */
function archiveCounts(
  pages: ArchiveRows[],
  found: Array<Map<string, { row: ScoredItem; ahead: number }>>,
  listings: ListingCount[][],
  top: number,
): MetricArchives {
  return {
    recorded: listings.map((counts) => counts.every((count) => !count.found || count.recorded)),
    counts: pages.map((page, p) => {
      const kept = listings[p].some((count) => count.found);
      const rows = listings[p].reduce((total, count) => total + count.rows, 0);
      return page.rows.map((row) => {
        const held = found[p].get(row.item);
        if (!kept) return undefined;
        if (held) return held.ahead < top ? held.row.score : undefined;
        return rows < top ? 0 : undefined;
      });
    }),
  };
}

/**
 * A sharded board: every shard's rows ahead of each found row (added to its home's), and each shard's
 * listing (its rows) into `listings`. False while an archive is still being taken.
 */
async function aheadElsewhere(
  pages: ArchiveRows[],
  found: Array<Map<string, { row: ScoredItem; ahead: number }>>,
  listings: ListingCount[][],
  ask: (asks: ShardAsked[]) => Promise<{ draining: boolean; counts: ListingCount[][] }>,
  shards: ShardKeys[],
): Promise<boolean> {
  const asks = shards.map((shard, s) => ({
    shard,
    asked: pages.map((page, p) => ({
      atSec: page.atSec,
      items: [],
      rows: [...found[p].values()].filter(({ row }) => shardOf(row.item, shards.length) !== s).map(({ row }) => row),
      rankItems: false,
    })),
  }));
  const second = await ask(asks);
  if (second.draining) return false;
  asks.forEach(({ asked }, s) => {
    second.counts[s].forEach((count, p) => {
      listings[p].push(count);
      asked[p].rows.forEach((row, j) => (found[p].get(row.item)!.ahead += count.ahead[j]));
    });
  });
  return true;
}

/**
 * Each point's `metrics` of an item's history page (points of the ranked metric): per other metric,
 * that metric's history of the item over the same boundaries (its own read, charged as the item's
 * history is: a read, and on a sharded board one per other shard it counts on); a metric whose
 * listing lists the item gives its score; where none does, each shard's row count of the listings
 * at those boundaries (one call per shard, a read each) tells 0 (fewer than `top` rows) from absent.
 * draining: a metric's history lacks a boundary while its archive there is being written (its
 * listing_counts call drains a chunk of it: the read is sent again, as one of that metric would be).
 */
export async function itemPointMetrics(
  store: HistoryStore,
  read: MetricsRead & { item: string },
  points: HistoryPoint[],
): Promise<{ draining: boolean; metrics: Array<MetricCounts | undefined> }> {
  const names = read.board.config.metrics ?? [];
  if (names.length < 2 || points.length === 0) return { draining: false, metrics: points.map(() => undefined) };
  const ranked = read.metric ?? names[0];
  const range = { fromSec: points[0].at, toSec: points[points.length - 1].at };
  const byMetric = await Promise.all(
    names.map(async (name) => {
      if (name === ranked) return { name, counts: await pointCounts(store, read, name, points, points) };
      read.admit?.(1);
      const { board, window, nowMs, item, admit } = read;
      const page = await store.itemHistory({ board: board.metric(name), window, nowMs, item, ...range, admit });
      if (page.draining) return { name, counts: undefined };
      return { name, counts: await pointCounts(store, read, name, points, page.points) };
    }),
  );
  const settled = byMetric.flatMap(({ name, counts }) => (counts ? [{ name, counts }] : []));
  if (settled.length < byMetric.length) return { draining: true, metrics: [] };
  const metrics = points.map((_, i) => {
    const counted: MetricCounts = {};
    for (const { name, counts } of settled) {
      const count = counts[i];
      if (count !== undefined) counted[name] = count;
    }
    return counted;
  });
  return { draining: false, metrics };
}

/**
 * A metric's count at each of `points`' boundaries from its own points there (see itemPointMetrics);
 * undefined while a boundary its points lack holds an archive being written, or written since.
 */
async function pointCounts(
  store: HistoryStore,
  read: MetricsRead & { item: string },
  name: string,
  points: HistoryPoint[],
  own: HistoryPoint[],
): Promise<Array<number | undefined> | undefined> {
  const byAt = new Map(own.map((point) => [point.at, point]));
  const asked = points.flatMap(({ at }) => ((byAt.get(at)?.score ?? null) === null ? [at] : []));
  const none = { draining: false, rows: new Map<number, number>(), atHome: new Set<number>() };
  const listed = asked.length > 0 ? await listingRows(store, read, name, asked) : none;
  // The item's shard keeps a listing its history did not find there: written since (read it again).
  if (listed.draining || asked.some((at) => !byAt.has(at) && listed.atHome.has(at))) return undefined;
  const top = read.window.snapshots?.top ?? 0;
  return points.map(({ at }) => {
    const point = byAt.get(at);
    if (point === undefined) return undefined;
    if (point.score !== null) return point.score;
    const held = listed.rows.get(at);
    return held !== undefined && held < top ? 0 : undefined;
  });
}

/**
 * The rows of a metric's listings at `boundaries` over every shard (absent: none kept there), and the
 * boundaries where the item's own shard keeps one; draining: a shard's archive is still being written
 * (each call drains a chunk of it).
 */
async function listingRows(
  store: HistoryStore,
  read: MetricsRead & { item: string },
  name: string,
  boundaries: number[],
): Promise<{ draining: boolean; rows: Map<number, number>; atHome: Set<number> }> {
  const { board, window, nowMs } = read;
  const metricBoard = board.metric(name);
  read.admit?.(metricBoard.shards.length);
  const asked = boundaries.map((atSec) => ({ atSec, items: [], rows: [], rankItems: false }));
  const home = metricBoard.shardOf(read.item);
  const replies = await Promise.all(
    metricBoard.shards.map(async (shard) => ({
      home: shard === home,
      ...(await store.listingCounts(metricBoard, window, nowMs, shard, asked)),
    })),
  );
  const rows = new Map<number, number>();
  const atHome = new Set<number>();
  for (const reply of replies) {
    reply.counts.forEach((count, i) => {
      if (count.found) rows.set(boundaries[i], (rows.get(boundaries[i]) ?? 0) + count.rows);
      if (count.found && reply.home) atHome.add(boundaries[i]);
    });
  }
  return { draining: replies.some((reply) => reply.draining), rows, atHome };
}
