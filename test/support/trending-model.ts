import { risingOf, RisingPhase, risingPhase } from '../../src/ranking/options/views/trending-math';

/**
 * A brute-force oracle for the trending views: keeps every event with the slot it landed in per window,
 * and computes each view's listing from scratch at read time. Positive amounts only (a hot item's
 * firstSeen is forgotten exactly when all its events left the window).
 */
export interface TrendWindow {
  name: string;
  periodSec: number;
  intervalSec: number;
}

export type TrendView =
  | { name: string; mode: 'decay'; window: string; halfLifeSec: number }
  | { name: string; mode: 'hot'; window: string; tauSec: number; epochSec: number }
  | { name: string; mode: 'rising'; window: string; baseline: string; minCount: number };

export interface TrendRow {
  item: string;
  score: number;
  observed?: number;
  expected?: number;
  phase?: RisingPhase;
}

interface LandedEvent {
  item: string;
  amount: number;
  slotStartSec: number;
  atSec: number;
}

const slotStart = (timeSec: number, intervalSec: number) => Math.floor(timeSec / intervalSec) * intervalSec;

export class TrendingModel {
  private readonly events = new Map<string, LandedEvent[]>();
  /** hot view -> item -> earliest event time since the item last held nothing in the view's window. */
  private readonly firstSeen = new Map<string, Map<string, number>>();

  constructor(
    readonly windows: TrendWindow[],
    readonly views: TrendView[],
  ) {
    for (const w of windows) this.events.set(w.name, []);
    for (const v of views) if (v.mode === 'hot') this.firstSeen.set(v.name, new Map());
  }

  /**
   * An event at `atMs` (<= nowMs): it lands in every window whose live span still holds its slot.
   * `createdMs`: the item's creation time sent with it (a hot view's firstSeen takes the earliest).
   */
  add(nowMs: number, item: string, amount: number, atMs = nowMs, createdMs = Infinity): void {
    this.forgetEmpty(nowMs);
    const atSec = atMs / 1000;
    for (const w of this.windows) {
      const start = slotStart(Math.floor(atSec), w.intervalSec);
      if (start <= this.cutoff(w, nowMs)) continue;
      this.events.get(w.name)!.push({ item, amount, slotStartSec: start, atSec });
    }
    for (const v of this.views) {
      if (v.mode !== 'hot' || !this.landsIn(v.window, atMs, nowMs)) continue;
      const seen = this.firstSeen.get(v.name)!;
      seen.set(item, Math.min(seen.get(item) ?? Infinity, atSec, createdMs / 1000));
    }
  }

  /** Takes back one event of `amount` at `atMs` (an unlike): out of every window that holds it. */
  remove(nowMs: number, item: string, amount: number, atMs: number): void {
    this.forgetEmpty(nowMs);
    for (const events of this.events.values()) {
      const at = events.findIndex((e) => e.item === item && e.amount === amount && e.atSec === atMs / 1000);
      if (at !== -1) events.splice(at, 1);
    }
  }

  /** The view's full listing as of `nowMs`, highest score first. */
  listing(viewName: string, nowMs: number): TrendRow[] {
    this.forgetEmpty(nowMs);
    const view = this.views.find((v) => v.name === viewName)!;
    const rows: TrendRow[] = [];
    const sums = this.sums(view.window, nowMs);
    if (view.mode === 'decay') {
      // Amounts summed per slot first (exact integers), then each slot's sum decayed, slots in time
      // order: items with the same sums per slot get the same float, as the view's zset gives them.
      const perSlot = new Map<string, Map<number, number>>();
      for (const e of this.live(view.window, nowMs)) {
        const slots = perSlot.get(e.item) ?? new Map<number, number>();
        slots.set(e.slotStartSec, (slots.get(e.slotStartSec) ?? 0) + e.amount);
        perSlot.set(e.item, slots);
      }
      for (const [item, slots] of perSlot) {
        let score = 0;
        for (const start of [...slots.keys()].sort((a, b) => a - b))
          score += slots.get(start)! * 2 ** ((start - nowMs / 1000) / view.halfLifeSec);
        if (score > 0) rows.push({ item, score });
      }
    } else if (view.mode === 'hot') {
      const seen = this.firstSeen.get(view.name)!;
      for (const [item, sum] of sums)
        if (sum > 0)
          rows.push({
            item,
            score: Math.log10(Math.max(sum, 1)) + (seen.get(item)! - view.epochSec) / view.tauSec,
          });
    } else {
      const short = this.windows.find((w) => w.name === view.window)!;
      const long = this.windows.find((w) => w.name === view.baseline)!;
      const baselines = this.sums(view.baseline, nowMs);
      const current = slotStart(Math.floor(nowMs / 1000), short.intervalSec);
      for (const [item, observed] of sums) {
        const rising = risingOf(observed, baselines.get(item) ?? 0, {
          windowPeriodSec: short.periodSec,
          baselinePeriodSec: long.periodSec,
          minCount: view.minCount,
        });
        if (rising.score === undefined) continue;
        const inSlot = (start: number) =>
          this.live(view.window, nowMs)
            .filter((e) => e.item === item && e.slotStartSec === start)
            .reduce((sum, e) => sum + e.amount, 0);
        const phase = risingPhase({
          isNew: rising.isNew,
          currentSlot: inSlot(current),
          previousSlot: inSlot(current - short.intervalSec),
          elapsedSec: nowMs / 1000 - current,
          intervalSec: short.intervalSec,
        });
        rows.push({ item, score: rising.score, observed, expected: rising.expected, phase });
      }
    }
    return rows.sort((a, b) => b.score - a.score || Buffer.compare(Buffer.from(b.item), Buffer.from(a.item)));
  }

  private forgetEmpty(nowMs: number): void {
    for (const v of this.views) {
      if (v.mode !== 'hot') continue;
      const sums = this.sums(v.window, nowMs);
      const seen = this.firstSeen.get(v.name)!;
      for (const item of [...seen.keys()]) if (!sums.get(item)) seen.delete(item);
    }
  }

  private landsIn(windowName: string, atMs: number, nowMs: number): boolean {
    const w = this.windows.find((x) => x.name === windowName)!;
    return slotStart(Math.floor(atMs / 1000), w.intervalSec) > this.cutoff(w, nowMs);
  }

  private cutoff(w: TrendWindow, nowMs: number): number {
    return slotStart(Math.floor(nowMs / 1000), w.intervalSec) - w.periodSec;
  }

  private live(windowName: string, nowMs: number): LandedEvent[] {
    const w = this.windows.find((x) => x.name === windowName)!;
    return this.events.get(windowName)!.filter((e) => e.slotStartSec > this.cutoff(w, nowMs));
  }

  private sums(windowName: string, nowMs: number): Map<string, number> {
    const sums = new Map<string, number>();
    for (const e of this.live(windowName, nowMs)) sums.set(e.item, (sums.get(e.item) ?? 0) + e.amount);
    return sums;
  }
}
