/**
 * A tiny in-memory ranking with the contract's semantics, written as plainly as possible: the oracle
 * for the property tests. Windows keep every slot forever; "live" is decided at read time.
 */
export interface ModelWindow {
  name: string;
  periodSec: number;
  intervalSec: number;
}

export class RankingModel {
  private readonly slots = new Map<string, Map<number, Map<string, number>>>();
  private readonly likes = new Map<string, number>();

  constructor(readonly windows: ModelWindow[]) {
    for (const w of windows) this.slots.set(w.name, new Map());
  }

  increment(nowMs: number, item: string, amount: number): void {
    for (const w of this.windows) this.add(w, Math.floor(nowMs / 1000), item, amount);
  }

  /** Whether a like now would count: no earlier like of this user for this item is inside any window. */
  wouldLike(nowMs: number, item: string, user: string): boolean {
    const earlier = this.likes.get(`${item}\x1f${user}`);
    return !(earlier !== undefined && this.windows.some((w) => this.holds(w, earlier, nowMs)));
  }

  like(nowMs: number, item: string, user: string): boolean {
    const key = `${item}\x1f${user}`;
    if (!this.wouldLike(nowMs, item, user)) return false;
    this.likes.set(key, nowMs);
    this.increment(nowMs, item, 1);
    return true;
  }

  unlike(nowMs: number, item: string, user: string): boolean {
    const key = `${item}\x1f${user}`;
    const likedMs = this.likes.get(key);
    if (likedMs === undefined) return false;
    this.likes.delete(key);
    let counted = false;
    for (const w of this.windows) {
      if (!this.holds(w, likedMs, nowMs)) continue;
      this.add(w, Math.floor(likedMs / 1000), item, -1);
      counted = true;
    }
    return counted;
  }

  /** An item retraction: its events out of every slot of every window, as if never sent. */
  retract(item: string): void {
    for (const slots of this.slots.values()) for (const items of slots.values()) items.delete(item);
  }

  /** Sum over live slots per item, for items whose sum is not 0. */
  sums(windowName: string, nowMs: number): Map<string, number> {
    const w = this.windows.find((x) => x.name === windowName)!;
    const current = slotStart(Math.floor(nowMs / 1000), w.intervalSec);
    const totals = new Map<string, number>();
    for (const [start, items] of this.slots.get(w.name)!) {
      if (start <= current - w.periodSec) continue;
      for (const [item, amount] of items) totals.set(item, (totals.get(item) ?? 0) + amount);
    }
    return totals;
  }

  /** The full listing: score > 0, highest first, ties in descending byte order, competition ranks. */
  listing(windowName: string, nowMs: number): Array<{ rank: number; item: string; score: number }> {
    const rows = [...this.sums(windowName, nowMs)]
      .filter(([, score]) => score > 0)
      .sort(([a, sa], [b, sb]) => sb - sa || Buffer.compare(Buffer.from(b), Buffer.from(a)));
    return rows.map(([item, score]) => ({ rank: 1 + rows.filter(([, s]) => s > score).length, item, score }));
  }

  /**
   * The listing as the service answers it: each row also says its rank in `previous` (a snapshot's
   * rows; none: every previousRank is null).
   */
  listed(
    windowName: string,
    nowMs: number,
    previous: Array<{ rank: number; item: string }> = [],
  ): Array<{ rank: number; item: string; score: number; previousRank: number | null }> {
    const ranks = new Map(previous.map((row) => [row.item, row.rank]));
    return this.listing(windowName, nowMs).map((row) => ({ ...row, previousRank: ranks.get(row.item) ?? null }));
  }

  private holds(w: ModelWindow, likedMs: number, nowMs: number): boolean {
    const current = slotStart(Math.floor(nowMs / 1000), w.intervalSec);
    return slotStart(Math.floor(likedMs / 1000), w.intervalSec) > current - w.periodSec;
  }

  private add(w: ModelWindow, timeSec: number, item: string, amount: number): void {
    const start = slotStart(timeSec, w.intervalSec);
    const slots = this.slots.get(w.name)!;
    const items = slots.get(start) ?? new Map<string, number>();
    items.set(item, (items.get(item) ?? 0) + amount);
    slots.set(start, items);
  }
}

export function slotStart(timeSec: number, intervalSec: number): number {
  return Math.floor(timeSec / intervalSec) * intervalSec;
}
