import { shardOf } from '../../src/ranking/core/shard-math';
import { GroupModel, GroupRow, ranked } from './group-model';
import { RankingModel } from './ranking-model';

/** Parts of listings a shard keeps until merged (group_parts_lib's PARTS_KEPT): the newest ones. */
const PARTS_KEPT = 4;

/** A member window a group board ranks, as the history spec declares it. */
export interface HistoryWindow {
  name: string;
  intervalSec: number;
  calendar?: true;
  /** Its snapshots' or archives' setting. */
  kept: { keep: number; top: number };
}

/** A counted member at a boundary; `retracted`: retracted since (still holds its place, worth nothing). */
interface Counted {
  item: string;
  score: number;
  retracted?: boolean;
}

/**
 * A listing kept at a boundary: a snapshot at its end (`at`), or a calendar period's archive from its
 * start; `counted`: the counted members of each group it lists, at the boundary.
 */
export interface Kept {
  at: number;
  rows: GroupRow[];
  counted: Map<string, Counted[]>;
}

/**
 * The history a group board keeps, as the model sees it, over a member board of `shards` shards.
 * Each shard crosses the member window on its own: its first call in a new slot (a write of one of its
 * items, a membership change of one, a read of the group board, which calls every shard) records its
 * part of the listing at the end of the slot it last ran in (a calendar period's when it wrote in
 * it): each group's best `top` members among its items; on a rolling window also, quiet, at the later
 * boundaries it ran no call before (quietSlots). A read of the group board merges the parts into
 * listings (a shard keeps its newest PARTS_KEPT parts), at the boundaries where every shard's part is
 * known (recorded, or empty: the shard had no membership change before then) and, rolling, some
 * shard's is not quiet, and forgets the parts. A listing is a snapshot of `top` rows
 * (the newest `keep` intervals readable), or the archive of a period where some group scored (the
 * newest `keep` kept). One shard: every call crosses it, and the merge is the unsharded listing.
 */
export class GroupHistoryModel {
  private readonly ran = new Map<number, number>();
  private readonly since = new Map<number, number>();
  private readonly written = new Set<string>();
  /** boundary -> shard -> its part (group -> its best members there) */
  private readonly parts = new Map<number, Map<number, Map<string, Counted[]>>>();
  /** "<boundary> <shard>" of the quiet parts: the shard ran no call in the slot ending there. */
  private readonly quiet = new Set<string>();
  readonly kept: Kept[] = [];

  constructor(
    private readonly window: HistoryWindow,
    private readonly shards: number,
    private readonly members: RankingModel,
    private readonly groups: GroupModel,
  ) {}

  shardOf(item: string): number {
    return shardOf(item, this.shards);
  }

  private slotOf(nowMs: number): number {
    const { intervalSec } = this.window;
    return Math.floor(nowMs / 1000 / intervalSec) * intervalSec;
  }

  /** A call on `shard` at `nowMs` (undefined: every shard's, a read of the group board). */
  cross(nowMs: number, shard?: number): void {
    for (let s = 0; s < this.shards; s++) {
      if (shard !== undefined && s !== shard) continue;
      const slotSec = this.slotOf(nowMs);
      const ran = this.ran.get(s);
      if (this.since.has(s) && ran !== undefined && slotSec > ran) {
        this.record(s, ran);
        for (const quiet of this.quietSlots(ran, slotSec)) this.record(s, quiet, true);
      }
      if (ran === undefined || slotSec > ran) this.ran.set(s, slotSec);
    }
  }

  /**
   * Over shards, a rolling window's crossing from the slot `ran` also records the shard's quiet parts:
   * at the later boundaries up to the current slot's start (the slots after `ran` before `slotSec`),
   * the newest PARTS_KEPT - 1 of them.
   */
  private quietSlots(ran: number, slotSec: number): number[] {
    const { intervalSec, calendar } = this.window;
    if (this.shards === 1 || calendar) return [];
    const slots: number[] = [];
    for (let q = Math.max(ran + intervalSec, slotSec - (PARTS_KEPT - 1) * intervalSec); q < slotSec; q += intervalSec)
      slots.push(q);
    return slots;
  }

  /** A membership change on the item's shard (after its crossing). */
  joined(nowMs: number, item: string): void {
    const shard = this.shardOf(item);
    if (!this.since.has(shard)) this.since.set(shard, this.slotOf(nowMs));
  }

  wrote(nowMs: number, item: string): void {
    this.written.add(`${this.shardOf(item)} ${this.slotOf(nowMs)}`);
  }

  /** A read of the group board: every shard crossed, then the known listings merged, the parts forgotten. */
  read(nowMs: number): void {
    this.cross(nowMs);
    for (const at of [...this.parts.keys()].sort((a, b) => a - b)) {
      const parts = this.parts.get(at)!;
      if (parts.size === 0) continue;
      const known = (s: number) => parts.has(s) || this.window.calendar || !(this.since.get(s)! < at);
      if (![...Array(this.shards).keys()].every(known)) continue;
      if (!this.window.calendar && [...parts.keys()].every((s) => this.quiet.has(`${at} ${s}`))) continue;
      this.keep(at, parts);
    }
    this.parts.clear();
    this.quiet.clear();
  }

  /** The snapshots still readable at `nowMs` (rolling), oldest first. */
  readable(nowMs: number): Kept[] {
    const { intervalSec, kept } = this.window;
    return this.kept.filter((k) => k.at > this.slotOf(nowMs) - kept.keep * intervalSec);
  }

  /**
   * An item retraction: in each kept listing, the group that counted the item loses its row and is
   * scored again over the members it still counts (none moves in past `top`), then placed again (out
   * when it counts none); no group moves in past the listing's `top`. In a part not merged yet, the
   * item's row stays in its place, worth nothing. Answers the listings and parts counting it.
   */
  retract(item: string): number {
    let counting = 0;
    for (const part of [...this.parts.values()].flatMap((byShard) => [...byShard.values()]))
      for (const rows of part.values())
        for (const row of rows.filter((r) => r.item === item && !r.retracted)) {
          row.retracted = true;
          counting++;
        }
    for (const kept of this.kept) {
      const group = [...kept.counted].find(([, members]) => members.some((m) => m.item === item))?.[0];
      if (group === undefined) continue;
      counting++;
      const members = kept.counted.get(group)!.filter((m) => m.item !== item);
      kept.counted.set(group, members);
      const scores = kept.rows.filter((r) => r.item !== group).map((r): [string, number] => [r.item, r.score]);
      if (members.length > 0) scores.push([group, this.groups.scoreOf(members)]);
      kept.rows = ranked(scores);
    }
    return counting;
  }

  /** The shard's part at the end of the slot starting at `slotSec` (a calendar period: at its start). */
  private record(shard: number, slotSec: number, quiet = false): void {
    const at = this.window.calendar ? slotSec : slotSec + this.window.intervalSec;
    if (quiet) this.quiet.add(`${at} ${shard}`);
    else this.quiet.delete(`${at} ${shard}`);
    if (this.window.calendar && !this.written.has(`${shard} ${slotSec}`)) return;
    const scores = this.members.listing(this.window.name, (slotSec + this.window.intervalSec) * 1000 - 1);
    const part = this.groups.counted(scores.filter((row) => this.shardOf(row.item) === shard));
    const byShard = this.parts.get(at) ?? new Map<number, Map<string, Counted[]>>();
    byShard.set(shard, new Map([...part].map(([group, rows]) => [group, rows.map((row) => ({ ...row }))])));
    this.parts.set(at, byShard);
    const held = [...this.parts.keys()].filter((b) => this.parts.get(b)!.has(shard)).sort((a, b) => b - a);
    // One shard: no parts, each crossing keeps its listing at once.
    for (const old of held.slice(this.shards > 1 ? PARTS_KEPT : held.length)) this.parts.get(old)!.delete(shard);
  }

  /**
   * The listing at `at` from the parts: the groups ranked by their counted members then, the listing's
   * `top` of them, each scored again without its members retracted since (out when it counts none).
   */
  private keep(at: number, parts: Map<number, Map<string, Counted[]>>): void {
    const byGroup = new Map<string, Counted[]>();
    for (const part of parts.values())
      for (const [group, rows] of part) byGroup.set(group, [...(byGroup.get(group) ?? []), ...rows]);
    const order = (a: Counted, b: Counted) =>
      b.score - a.score || Buffer.compare(Buffer.from(b.item), Buffer.from(a.item));
    const counted = new Map([...byGroup].map(([group, rows]) => [group, rows.sort(order).slice(0, this.groups.top)]));
    const then = ranked([...counted].map(([group, rows]): [string, number] => [group, this.groups.scoreOf(rows)]));
    const listed = then.slice(0, this.window.kept.top).flatMap(({ item }): Array<[string, Counted[]]> => {
      const members = counted.get(item)!.filter((row) => !row.retracted);
      return members.length > 0 ? [[item, members]] : [];
    });
    const rows = ranked(listed.map(([group, members]): [string, number] => [group, this.groups.scoreOf(members)]));
    if (this.window.calendar && rows.length === 0) return;
    this.kept.push({ at, rows, counted: new Map(listed) });
    if (this.window.calendar && this.kept.length > this.window.kept.keep) this.kept.shift();
  }
}
