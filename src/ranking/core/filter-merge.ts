import { boardOrder, compareUtf8 } from './shard-math';

/** A row a filtered scan answers: its group "" when it has none; on a board keeping pairs its mark (`tie`). */
export interface ScanRow {
  item: string;
  score: number;
  group: string;
  tie?: string;
}

/** A scanned row as the board ranks count it: its score, and on a board keeping pairs its mark. */
export interface ScannedRecord {
  score: number;
  tie?: string;
}

/** What one filtered scan call of a shard answers (a window's group_page, a view's filter read). */
export interface ScanReply<Row extends ScanRow> {
  draining: boolean;
  rows: Row[];
  /** The scores of the scanned rows that did not pass (the board ranks count them). */
  skipped: number[];
  /** On a board keeping pairs: the marks of those rows, as `skipped`. */
  skippedTies?: string[];
  /** The place after the last row scanned. */
  next: number;
  /** The shard lists nothing after the scanned rows. */
  ended: boolean;
  /** The last row scanned (undefined: none). */
  last?: { item: string; score: number; tie?: string };
}

/** What a filtered read asks of the board's listing. */
export interface FilterAsk {
  depth: number;
  /** At most this many rows of one group (0: no cap). */
  perGroup: number;
}

/** One shard's scan so far: its rows not yet placed, every record it scanned, where it goes on. */
export interface ShardScan<Row extends ScanRow = ScanRow> {
  start: number;
  ended: boolean;
  pending: Row[];
  scanned: ScannedRecord[];
  last?: { item: string; score: number; tie?: string };
}

/** A row of a filtered listing with its board rank. */
export type FilteredRow<Row extends ScanRow = ScanRow> = Row & { rank: number };

export const newScan = <Row extends ScanRow>(): ShardScan<Row> => ({
  start: 0,
  ended: false,
  pending: [],
  scanned: [],
});

/** Takes a scan reply into its shard's scan. */
export function absorb<Row extends ScanRow>(scan: ShardScan<Row>, reply: ScanReply<Row>): void {
  scan.pending.push(...reply.rows);
  scan.scanned.push(
    ...reply.rows.map(({ score, tie }) => ({ score, tie })),
    ...reply.skipped.map((score, i) => ({ score, tie: reply.skippedTies?.[i] })),
  );
  scan.start = reply.next;
  scan.ended = reply.ended;
  if (reply.last !== undefined) scan.last = reply.last;
}

/**
 * Places the rows no shard can still precede (each open shard scanned down to them), in board order:
 * at most `perGroup` of a group (`counts`, updated), until `accepted` holds `depth` rows. A row a shard
 * may still precede stays pending for the next round. Each shard's scan caps a group too (group_page.lua,
 * from the `counts` of the rounds before), so a group holding most of its listing does not fill its
 * answer; only here are rows of one group answered by several shards in one round counted together.
 */
export function place<Row extends ScanRow>(
  scans: Array<ShardScan<Row>>,
  accepted: Row[],
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

/**
 * Each row's board rank: 1 + the scanned records ahead of it on every shard (competition rank): a
 * better score, or on a board with marks the same score and a better mark (marks follow the board's
 * order as scores do, in the byte order of the shards' zsets: tiebreak_lib, ties_lib), so equal pairs
 * share a rank and a strict board's marks, one per row, rank strictly.
 */
export function ranked<Row extends ScanRow>(
  rows: Row[],
  scans: Array<ShardScan<Row>>,
  ascending: boolean,
): Array<FilteredRow<Row>> {
  const sign = ascending ? -1 : 1;
  const before = (s: ScannedRecord, row: Row) =>
    s.score !== row.score
      ? sign * (s.score - row.score) > 0
      : s.tie !== undefined && row.tie !== undefined && sign * compareUtf8(s.tie, row.tie) > 0;
  const ahead = (row: Row) => scans.reduce((sum, scan) => sum + scan.scanned.filter((s) => before(s, row)).length, 0);
  return rows.map((row) => ({ ...row, rank: ahead(row) + 1 }));
}

/** A filtered read over a board's shards: how deep, how many calls, told the calls past the first. */
export interface ScanPlan {
  shards: number;
  offset: number;
  limit: number;
  perGroup: number;
  ascending: boolean;
  /** Most scan calls per shard. */
  calls: number;
  admit?: (calls: number) => void;
}

/** One shard's scan call from `start`, `seen` rows of each group already listed. */
export type ScanOne<Row extends ScanRow> = (
  shard: number,
  start: number,
  seen: Record<string, number>,
) => Promise<ScanReply<Row>>;

/**
 * Scans the shards in rounds until the page is full or `plan.calls` rounds ran: the page's rows with
 * their board ranks, `truncated` when the bound stopped it short, and whether a shard still drains.
 */
export async function scanFiltered<Row extends ScanRow>(
  plan: ScanPlan,
  scanOne: ScanOne<Row>,
): Promise<{ rows: Array<FilteredRow<Row>>; truncated: boolean; draining: boolean }> {
  const depth = plan.offset + plan.limit;
  const scans = Array.from({ length: plan.shards }, () => newScan<Row>());
  const accepted: Row[] = [];
  const counts = new Map<string, number>();
  let draining = false;
  for (let call = 1; call <= plan.calls; call++) {
    const seen = Object.fromEntries(counts);
    const open = scans.filter((scan) => !scan.ended).length;
    plan.admit?.(call === 1 ? open - 1 : open);
    const replies = await Promise.all(scans.map((scan, i) => (scan.ended ? undefined : scanOne(i, scan.start, seen))));
    replies.forEach((reply, i) => {
      if (reply === undefined) return;
      draining ||= reply.draining;
      absorb(scans[i], reply);
    });
    place(scans, accepted, counts, { depth, perGroup: plan.perGroup }, plan.ascending);
    if (accepted.length >= depth || scans.every((scan) => scan.ended)) break;
  }
  const truncated = accepted.length < depth && scans.some((scan) => !scan.ended || scan.pending.length > 0);
  return { rows: ranked(accepted, scans, plan.ascending).slice(plan.offset), truncated, draining };
}
