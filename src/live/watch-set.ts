import type { LiveClient } from './live-client';
import { groupScan } from '../ranking/options/groups/groups.limits';
import { STREAM_READ_ROWS } from './live.limits';

/** How a stream's rows are read, as GET top?perGroup=&minActors=&metric= (none: the window's top rows). */
export interface StreamFilters {
  perGroup?: number;
  minActors?: number;
  /** The metric the rows rank by (a board with metrics; absent: its first). */
  metric?: string;
}

/** Whether a stream asks for a filtered page (GET top's perGroup or minActors). */
export function filtered(filters: StreamFilters): boolean {
  return filters.perGroup !== undefined || filters.minActors !== undefined;
}

/** One open stream as the hub tracks it. */
export interface Subscriber {
  readonly client: LiveClient;
  /** Who it counts against (callerOf: `key:<name>`, else `ip:<address>`). */
  readonly owner: string;
  readonly openedAtMs: number;
  /** Last time its client was seen reading (its buffer empty or drained). */
  lastProgressMs: number;
  /** Takes it out of the watch and releases what it holds (set once subscribed). */
  detach: () => void;
}

/** The clients of one group asking for the same row count: one JSON per event for all of them. */
export interface RowView {
  readonly limit: number;
  readonly subscribers: Set<Subscriber>;
  /** The rows last sent (JSON). */
  sentRows: string;
}

/** The clients of one board watching one window (of one segment) within one row bucket: one read per poll serves them all. */
export interface WatchGroup {
  /** Its key in its board's groups (window, segment, row bucket). */
  readonly key: string;
  readonly window: string;
  /** The segment whose rows it reads (undefined: the board's). */
  readonly segment?: string;
  /** Rows one poll reads: the bucket (STREAM_READ_ROWS) of every view's limit. */
  readonly readRows: number;
  /** What its rows are filtered by (every view of the group shares them). */
  readonly filters: StreamFilters;
  /**
   * Commands one poll of it sends per shard: 1, a filtered page up to groupScan's calls (its bounded
   * scan); on a board with metrics one more, the rows' metric_counts (a poll's at most 100 rows fit
   * in one call per shard: METRIC_COUNTS_PER_CALL / 8 metrics is 250).
   */
  readonly callsPerShard: number;
  /**
   * The `to` of the listing last read (unix s): the end of its window's current slot, or of a calendar
   * window's period. Past it the rows may change without a write (a slot expires, a period resets).
   */
  readUntilSec: number;
  /** The board's change version its rows were last read (or sent) at: a poll tick may read some groups only. */
  version: number;
  readonly views: Map<number, RowView>;
}

/** What one poll tick reads of a board: all its groups, or the next of them in turn when they pass the tick's budget. */
export interface DueBoard {
  readonly watched: WatchedBoard;
  readonly groups: WatchGroup[];
}

export interface WatchedBoard {
  readonly name: string;
  readonly shards: number;
  version: number;
  readonly groups: Map<string, WatchGroup>;
}

export interface Watch {
  board: string;
  shards: number;
  version: number;
  window: string;
  segment?: string;
  limit: number;
  filters: StreamFilters;
  /** How many metrics the board declares (0: none). */
  metrics: number;
  /** The `to` of the listing the subscriber was sent (WatchGroup.readUntilSec). */
  untilSec: number;
  rows: string;
}

/** The row bucket a limit is read in. */
export function readRowsOf(limit: number): number {
  return STREAM_READ_ROWS.find((rows) => rows >= limit) ?? limit;
}

/** What the hub polls: boards, their groups and row views, kept in round-robin order for the poller. */
export class WatchSet {
  /** Map order is poll order: a polled board moves to the end. */
  private readonly boards = new Map<string, WatchedBoard>();

  /** Adds a subscriber to its view (made as needed); answers what takes it out again. */
  add(watch: Watch, subscriber: Subscriber): () => void {
    const watched = this.boards.get(watch.board) ?? {
      name: watch.board,
      shards: watch.shards,
      version: watch.version,
      groups: new Map<string, WatchGroup>(),
    };
    this.boards.set(watch.board, watched);
    const readRows = readRowsOf(watch.limit);
    const { perGroup, minActors, metric } = watch.filters;
    const key = [watch.window, watch.segment, readRows, perGroup, minActors, metric].map((f) => f ?? '').join('\x1f');
    const group = watched.groups.get(key) ?? {
      key,
      version: watch.version,
      window: watch.window,
      segment: watch.segment,
      readRows,
      filters: watch.filters,
      callsPerShard: (filtered(watch.filters) ? groupScan().calls : 1) + (watch.metrics > 0 ? 1 : 0),
      readUntilSec: watch.untilSec,
      views: new Map<number, RowView>(),
    };
    watched.groups.set(key, group);
    const view = group.views.get(watch.limit) ?? { limit: watch.limit, subscribers: new Set(), sentRows: watch.rows };
    group.views.set(watch.limit, view);
    view.subscribers.add(subscriber);
    return () => {
      view.subscribers.delete(subscriber);
      if (view.subscribers.size === 0 && group.views.get(view.limit) === view) group.views.delete(view.limit);
      if (group.views.size === 0 && watched.groups.get(key) === group) watched.groups.delete(key);
      if (watched.groups.size === 0 && this.boards.get(watched.name) === watched) this.boards.delete(watched.name);
    };
  }

  /**
   * The boards next in turn whose planned commands (shards x (1 + the groups' calls): the version
   * read, then a top read per group, a filtered one up to groupScan's calls) fit in `budget`. A first
   * board whose plan alone passes it is read in part: the next of its groups in turn that fit (at
   * least one), which move behind its others.
   */
  due(budget: number): DueBoard[] {
    const due: DueBoard[] = [];
    let planned = 0;
    for (const watched of this.boards.values()) {
      const all = [...watched.groups.values()];
      const cost = watched.shards * (1 + callsOf(all));
      if (due.length > 0 && planned + cost > budget) break;
      if (cost <= budget) {
        due.push({ watched, groups: all });
        planned += cost;
        continue;
      }
      const groups = fitting(all, Math.floor(budget / watched.shards) - 1);
      for (const group of groups) {
        watched.groups.delete(group.key);
        watched.groups.set(group.key, group);
      }
      due.push({ watched, groups });
      break;
    }
    return due;
  }

  /** Whether a stream of `segment` (undefined: the board's) keeps the board within `most` distinct segments. */
  admitsSegment(board: string, segment: string | undefined, most: number): boolean {
    if (segment === undefined) return true;
    const segments = new Set<string>();
    for (const group of this.boards.get(board)?.groups.values() ?? []) {
      if (group.segment === segment) return true;
      if (group.segment !== undefined) segments.add(group.segment);
    }
    return segments.size < most;
  }

  /** Moves a polled board behind the others. */
  rotate(watched: WatchedBoard): void {
    if (this.boards.get(watched.name) !== watched) return;
    this.boards.delete(watched.name);
    this.boards.set(watched.name, watched);
  }

  get boardCount(): number {
    return this.boards.size;
  }

  clear(): void {
    this.boards.clear();
  }
}

/** The first of `groups` whose calls per shard fit in `calls` (at least one). */
function fitting(groups: WatchGroup[], calls: number): WatchGroup[] {
  let planned = groups[0].callsPerShard;
  let count = 1;
  while (count < groups.length && planned + groups[count].callsPerShard <= calls)
    planned += groups[count++].callsPerShard;
  return groups.slice(0, count);
}

/** Commands per shard one poll of `groups` sends (their top reads). */
function callsOf(groups: WatchGroup[]): number {
  return groups.reduce((calls, group) => calls + group.callsPerShard, 0);
}

/** Every subscriber of a board. */
export function subscribersOf(watched: WatchedBoard): Subscriber[] {
  const all: Subscriber[] = [];
  for (const group of watched.groups.values())
    for (const view of group.views.values()) for (const subscriber of view.subscribers) all.push(subscriber);
  return all;
}
