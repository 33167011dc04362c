import { boardOrder } from '../core/shard-math';
import type { GroupPageReply, GroupRow } from './filters.functions';

/** What a filtered read asks of the board's listing. */
export interface FilterAsk {
  depth: number;
  /** At most this many rows of one group (0: no cap). */
  perGroup: number;
}

/** One shard's scan so far: its rows not yet placed, every score it scanned, where it goes on. */
export interface ShardScan {
  start: number;
  ended: boolean;
  pending: GroupRow[];
  scanned: number[];
  last?: { item: string; score: number };
}

/** A row of a filtered listing with its board rank. */
export type FilteredRow = GroupRow & { rank: number };

export const newScan = (): ShardScan => ({ start: 0, ended: false, pending: [], scanned: [] });

/** Takes a group_page reply into its shard's scan. */
export function absorb(scan: ShardScan, reply: GroupPageReply): void {
  scan.pending.push(...reply.rows);
  scan.scanned.push(...reply.rows.map((row) => row.score), ...reply.skipped);
  scan.start = reply.next;
  scan.ended = reply.ended;
  if (reply.last !== undefined) scan.last = reply.last;
}

/**
 * Places the rows no shard can still precede (each open shard scanned down to them), in board order:
 * at most `perGroup` of a group (`counts`, updated), until `accepted` holds `depth` rows. A row a shard
 * may still precede stays pending for the next round.
 */
export function place(
  scans: ShardScan[],
  accepted: GroupRow[],
  counts: Map<string, number>,
  ask: FilterAsk,
  ascending: boolean,
): void {
  const order = boardOrder(ascending);
  const open = scans.filter((scan) => !scan.ended);
  const candidates = scans
    .flatMap((scan) => scan.pending.map((row) => ({ row, scan })))
    .sort((a, b) => order(a.row, b.row));
  for (const { row, scan } of candidates) {
    if (accepted.length >= ask.depth) return;
    if (open.some((other) => other !== scan && (other.last === undefined || order(row, other.last) > 0))) return;
    scan.pending.shift();
    const taken = counts.get(row.group) ?? 0;
    if (ask.perGroup > 0 && row.group !== '' && taken >= ask.perGroup) continue;
    if (row.group !== '') counts.set(row.group, taken + 1);
    accepted.push(row);
  }
}

/** Each row's board rank: 1 + the scanned scores ahead of it on every shard (competition rank). */
export function ranked(rows: GroupRow[], scans: ShardScan[], ascending: boolean): FilteredRow[] {
  const ahead = (score: number) =>
    scans.reduce((sum, scan) => sum + scan.scanned.filter((s) => (ascending ? s < score : s > score)).length, 0);
  return rows.map((row) => ({ ...row, rank: ahead(row.score) + 1 }));
}
