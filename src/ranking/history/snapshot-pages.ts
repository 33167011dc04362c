import type { ScoredItem } from '../core/ranking.types';
import type { WindowConfig } from '../core/window-math';
import type { SnapshotPage, StoredSnapshot } from './history.functions';

/** What the merge reads of a window: whether it is a calendar window, and its snapshots' `top`. */
export type MergedWindow = Pick<WindowConfig, 'calendar' | 'snapshots'>;

/** One shard's snapshot as read so far (history_read's pages joined): page, where the next starts (none: read whole). */
export interface ShardSnapshot {
  keeps: boolean;
  snapshot?: StoredSnapshot;
  page?: SnapshotPage;
  pendingSec: number | null;
}

/**
 * The shards' snapshots a window's listing merges: every one found, or on a calendar window only those of
 * the latest period found (a shard that scored nothing in it has none, and its older period's rows are
 * not the board's then).
 */
export function mergedSnapshots(window: MergedWindow, reads: Array<{ snapshot?: StoredSnapshot }>): StoredSnapshot[] {
  const stored = reads.flatMap((read) => (read.snapshot ? [read.snapshot] : []));
  if (!window.calendar || stored.length === 0) return stored;
  const atSec = Math.max(...stored.map((snapshot) => snapshot.atSec));
  return stored.filter((snapshot) => snapshot.atSec === atSec);
}

/**
 * The shards (indexes in `reads`) whose snapshot's rows not read yet may still rank within the window's
 * `top` rows merged: none once `top` rows are read and each such shard's last row read ranks behind the
 * `top`-th by its score (and mark), as every row after it in its text does. By the score alone: on a
 * `ties: first` board a shard's rows of one score follow its tie order, not the ids the merge orders them by.
 */
export function pagesWanted(
  reads: ShardSnapshot[],
  window: MergedWindow,
  order: (a: ScoredItem, b: ScoredItem) => number,
): number[] {
  const found = new Set(mergedSnapshots(window, reads));
  const open = reads.flatMap((read, i) => (read.page && read.snapshot && found.has(read.snapshot) ? [i] : []));
  const top = window.snapshots?.top ?? Infinity;
  const rows = [...found].flatMap((snapshot) => snapshot.rows);
  if (open.length === 0 || rows.length < top) return open;
  const cutoff = { ...rows.sort(order)[top - 1], item: '' };
  return open.filter((i) => {
    const shardRows = reads[i].snapshot?.rows ?? [];
    const last = shardRows[shardRows.length - 1];
    return last === undefined || order({ ...last, item: '' }, cutoff) <= 0;
  });
}
