import type { ModelWindow } from './ranking-model';

export type BestAggregate = 'max' | 'min' | 'last';

interface BestEvent {
  atMs: number;
  /** Arrival order: on `last`, equal event times go to the later arrival. */
  seq: number;
  item: string;
  score: number;
}

/**
 * The oracle for max / min / last boards, as plain as possible: every recorded event is kept, and a
 * window's value of an item is computed at read time from the events whose slot is live, in every
 * window that held the event's slot when it was recorded (a late event outside a window's span never
 * lands there, even if that window is longer than another that took it).
 */
export class BestModel {
  private readonly events = new Map<string, BestEvent[]>();
  private seq = 0;

  constructor(
    readonly windows: ModelWindow[],
    readonly aggregate: BestAggregate,
  ) {
    for (const w of windows) this.events.set(w.name, []);
  }

  /** Records a score at `atMs` (<= now); false when no window's live span holds its slot (the service's 400). */
  record(nowMs: number, atMs: number, item: string, score: number): boolean {
    const holding = this.holding(nowMs, atMs);
    for (const w of holding) this.events.get(w.name)!.push({ atMs, seq: this.seq++, item, score });
    return holding.length > 0;
  }

  /** Whether some window's live span holds the slot of `atMs`. */
  lands(nowMs: number, atMs: number): boolean {
    return this.holding(nowMs, atMs).length > 0;
  }

  private holding(nowMs: number, atMs: number): ModelWindow[] {
    return this.windows.filter((w) => slotOf(atMs, w) > slotOf(nowMs, w) - w.periodSec);
  }

  /** Each item's value over the live slots. */
  values(windowName: string, nowMs: number): Map<string, number> {
    const w = this.windows.find((x) => x.name === windowName)!;
    const live = this.events.get(w.name)!.filter((e) => slotOf(e.atMs, w) > slotOf(nowMs, w) - w.periodSec);
    const best = new Map<string, BestEvent>();
    for (const e of live) {
      const held = best.get(e.item);
      if (held === undefined || this.beats(e, held)) best.set(e.item, e);
    }
    return new Map([...best].map(([item, e]) => [item, e.score]));
  }

  /**
   * The listing: every recorded score whatever its sign, best first (highest; `ascending`: lowest),
   * ties in descending byte order of item id (ascending: ascending byte order, the exact reverse),
   * competition ranks.
   */
  listing(windowName: string, nowMs: number, ascending = false): Array<{ rank: number; item: string; score: number }> {
    const sign = ascending ? -1 : 1;
    const rows = [...this.values(windowName, nowMs)].sort(
      ([a, sa], [b, sb]) => sign * (sb - sa) || sign * Buffer.compare(Buffer.from(b), Buffer.from(a)),
    );
    return rows.map(([item, score]) => ({
      rank: 1 + rows.filter(([, s]) => sign * (s - score) > 0).length,
      item,
      score,
    }));
  }

  private beats(e: BestEvent, held: BestEvent): boolean {
    if (this.aggregate === 'max') return e.score > held.score;
    if (this.aggregate === 'min') return e.score < held.score;
    return e.atMs > held.atMs || (e.atMs === held.atMs && e.seq > held.seq);
  }
}

function slotOf(ms: number, w: ModelWindow): number {
  const sec = Math.floor(ms / 1000);
  return sec - (sec % w.intervalSec);
}
