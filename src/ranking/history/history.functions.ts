import { Reply } from '../../redis/replies';
import { typedFunction } from '../../redis/function-library';
import type { ScoredItem } from '../core/ranking.types';
import { WindowCall, windowRead } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';

/** A snapshot as one shard stored it: its boundary (unix s) and rows, best first. */
export interface StoredSnapshot {
  atSec: number;
  rows: ScoredItem[];
}

/** An item in one snapshot of one shard: its score (0: not listed) and the rows above it (-1: not listed). */
export interface SnapshotPoint {
  atSec: number;
  score: number;
  above: number;
}

/** Snapshot rows as stored: "\x1e<item>\x1f<score>\x1f<position>" each (older snapshots: no position), best first (snapshot_lib.lua). */
export function parseSnapshotRows(packed: string): ScoredItem[] {
  if (packed === '') return [];
  return packed
    .slice(1)
    .split('\x1e')
    .map((row) => {
      const [item, score] = row.split('\x1f');
      return { item, score: Number(score) };
    });
}

/** Snapshot reads: a window's snapshot at a time, an item through the snapshots, rows above scores in them. */
export const HISTORY_FUNCTIONS = {
  historyRead: typedFunction({
    name: 'tbRankHistoryRead',
    handler: 'history_read',
    flags: ['allow-oom'],
    numberOfKeys: 3,
    build: (call: WindowCall & { atSec: number | undefined }) => windowRead(call, [call.atSec ?? '']),
    /** keeps: the window keeps snapshots; snapshot: the one found (undefined: none) */
    decode: (raw): { keeps: boolean; snapshot?: StoredSnapshot } => {
      const reply = new Reply('tbRankHistoryRead', raw).expectLength(1, true);
      if (reply.length === 1) return { keeps: reply.flag(0) };
      reply.expectLength(3);
      return { keeps: true, snapshot: { atSec: reply.int(1), rows: parseSnapshotRows(reply.string(2)) } };
    },
  }),

  historyItem: typedFunction({
    name: 'tbRankHistoryItem',
    handler: 'history_item',
    flags: ['allow-oom'],
    numberOfKeys: 3,
    build: (call: WindowCall & { item: string; fromSec: number; toSec: number; mostSnapshots: number }) =>
      windowRead(call, [call.item, call.fromSec, call.toSec, call.mostSnapshots]),
    /** nextSec: the boundary the next page starts at (null: the range is answered) */
    decode: (raw): { keeps: boolean; nextSec: number | null; points: SnapshotPoint[] } => {
      const reply = new Reply('tbRankHistoryItem', raw).expectLength(2, true);
      if ((reply.length - 2) % 3 !== 0) throw reply.unexpected(reply.length - 1, 'triples of boundary, score, above');
      return {
        keeps: reply.flag(0),
        nextSec: reply.int(1) || null,
        points: Array.from({ length: (reply.length - 2) / 3 }, (_, i) => ({
          atSec: reply.int(2 + 3 * i),
          score: reply.number(3 + 3 * i),
          above: reply.int(4 + 3 * i),
        })),
      };
    },
  }),

  snapshotCut: typedFunction({
    name: 'tbRankSnapshotCut',
    handler: 'snapshot_cut',
    // Shortens a snapshot (frees memory): it runs on a full Redis too.
    flags: ['allow-oom'],
    numberOfKeys: 3,
    build: (call: WindowCall & { atSec: number; last: ScoredItem }) =>
      windowRead(call, [call.atSec, call.last.score, call.last.item]),
    /** the rows cut */
    decode: (raw) => new Reply('tbRankSnapshotCut', raw).expectLength(1).int(0),
  }),

  historyCount: typedFunction({
    name: 'tbRankHistoryCount',
    handler: 'history_count',
    flags: ['allow-oom'],
    numberOfKeys: 3,
    build: (call: WindowCall & { points: Array<{ atSec: number; score: number }> }) =>
      windowRead(
        call,
        call.points.flatMap((point) => [point.atSec, point.score]),
      ),
    /** rows above each point's score in this shard's snapshot at or before its time */
    decode: (raw, call) => {
      const reply = new Reply('tbRankHistoryCount', raw).expectLength(call.points.length);
      return call.points.map((_, i) => reply.int(i));
    },
  }),
};

/** The history slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class HistoryFunctions extends sliceFunctions(HISTORY_FUNCTIONS) {}
