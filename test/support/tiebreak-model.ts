import type { ModelWindow } from './ranking-model';
import type { BestAggregate } from './best-model';

interface PairEvent {
  atMs: number;
  /** Arrival order: on `last`, equal event times go to the later arrival. */
  seq: number;
  item: string;
  score: number;
  tiebreak: number;
}

/** A listed row of a board with a tiebreak, best first. */
export type PairRow = { rank: number; item: string; score: number; tiebreak: number };

/**
 * The oracle for max / min / last boards with a tiebreak, as plain as possible: every recorded event
 * is kept, and a window's pair of an item is computed at read time from the events whose slot is live
 * (max / min: the best pair, score first then tiebreak by its order; last: the latest event's pair).
 */
export class TiebreakModel {
  private readonly events = new Map<string, PairEvent[]>();
  private seq = 0;

  constructor(
    readonly windows: ModelWindow[],
    readonly aggregate: BestAggregate,
    readonly order: 'asc' | 'desc',
    /** The board's order: asc, the lower score ranks higher (the tiebreak keeps its own order). */
    readonly scoreOrder: 'asc' | 'desc' = 'desc',
  ) {
    for (const w of windows) this.events.set(w.name, []);
  }

  /** Whether some window's live span holds the slot of `atMs`. */
  lands(nowMs: number, atMs: number): boolean {
    return this.holding(nowMs, atMs).length > 0;
  }

  record(nowMs: number, atMs: number, item: string, score: number, tiebreak: number): void {
    for (const w of this.holding(nowMs, atMs))
      this.events.get(w.name)!.push({ atMs, seq: this.seq++, item, score, tiebreak });
  }

  /** Whether the pair (score, tiebreak) ranks ahead of (other score, other tiebreak). */
  ahead(a: { score: number; tiebreak: number }, b: { score: number; tiebreak: number }): boolean {
    if (a.score !== b.score) return this.scoreOrder === 'desc' ? a.score > b.score : a.score < b.score;
    return this.order === 'desc' ? a.tiebreak > b.tiebreak : a.tiebreak < b.tiebreak;
  }

  /**
   * The listing: best pair first, equal pairs in descending byte order of item id (an asc board:
   * ascending, as a plain asc board lists equal scores), competition ranks.
   */
  listing(windowName: string, nowMs: number): PairRow[] {
    const ids = (a: { item: string }, b: { item: string }) => Buffer.compare(Buffer.from(b.item), Buffer.from(a.item));
    const rows = [...this.values(windowName, nowMs)].sort(
      (a, b) =>
        (this.ahead(a, b) ? -1 : this.ahead(b, a) ? 1 : 0) || (this.scoreOrder === 'desc' ? ids(a, b) : ids(b, a)),
    );
    return rows.map((row) => ({ ...row, rank: this.rankOf(rows, row) }));
  }

  /** 1 + the rows whose pair is ahead of `pair`. */
  rankOf(rows: Array<{ score: number; tiebreak: number }>, pair: { score: number; tiebreak: number }): number {
    return 1 + rows.filter((row) => this.ahead(row, pair)).length;
  }

  private values(windowName: string, nowMs: number): Array<{ item: string; score: number; tiebreak: number }> {
    const w = this.windows.find((x) => x.name === windowName)!;
    const live = this.events.get(w.name)!.filter((e) => slotOf(e.atMs, w) > slotOf(nowMs, w) - w.periodSec);
    const best = new Map<string, PairEvent>();
    for (const e of live) {
      const held = best.get(e.item);
      if (held === undefined || this.beats(e, held)) best.set(e.item, e);
    }
    return [...best.values()].map(({ item, score, tiebreak }) => ({ item, score, tiebreak }));
  }

  private beats(e: PairEvent, held: PairEvent): boolean {
    if (this.aggregate === 'last') return e.atMs > held.atMs || (e.atMs === held.atMs && e.seq > held.seq);
    if (e.score !== held.score) return this.aggregate === 'max' ? e.score > held.score : e.score < held.score;
    return this.order === 'desc' ? e.tiebreak > held.tiebreak : e.tiebreak < held.tiebreak;
  }

  private holding(nowMs: number, atMs: number): ModelWindow[] {
    return this.windows.filter((w) => slotOf(atMs, w) > slotOf(nowMs, w) - w.periodSec);
  }
}

function slotOf(ms: number, w: ModelWindow): number {
  const sec = Math.floor(ms / 1000);
  return sec - (sec % w.intervalSec);
}

/**
 * The strict order of a `ties: first` board with a tiebreak, beside a TiebreakModel: for each item of
 * each window the tick at which it reached its current pair. Every write is a tick of its own, the
 * expiry a step makes one tick (their order among themselves is not decided by the contract: the
 * service's is one of them, fixed once taken); on a sharded board (`shardOf` given) items of different
 * shards that reached equal pairs in the same millisecond may come in either order.
 */
export class StrictPairs {
  private tick = 0;
  private readonly known = new Map<
    string,
    Map<string, { score: number; tiebreak: number; reached: number; atMs: number }>
  >();

  constructor(
    readonly pairs: TiebreakModel,
    private readonly shardOf?: (item: string) => number,
  ) {
    for (const w of pairs.windows) this.known.set(w.name, new Map());
  }

  /** One tick: every item whose pair changed by `nowMs` (or left) reached it now. */
  settle(nowMs: number): void {
    this.tick++;
    for (const w of this.pairs.windows) {
      const known = this.known.get(w.name)!;
      const rows = new Map(this.pairs.listing(w.name, nowMs).map((row) => [row.item, row]));
      for (const item of known.keys()) if (!rows.has(item)) known.delete(item);
      for (const [item, { score, tiebreak }] of rows) {
        const held = known.get(item);
        if (held?.score !== score || held.tiebreak !== tiebreak)
          known.set(item, { score, tiebreak, reached: this.tick, atMs: nowMs });
      }
    }
  }

  /** Whether `a` may be listed before `b`: a better pair, or the same one reached no later. */
  mayPrecede(windowName: string, a: string, b: string): boolean {
    const known = this.known.get(windowName)!;
    const [x, y] = [known.get(a)!, known.get(b)!];
    if (this.pairs.ahead(x, y)) return true;
    if (this.pairs.ahead(y, x)) return false;
    if (this.shardOf && this.shardOf(a) !== this.shardOf(b) && x.atMs === y.atMs) return true;
    return x.reached <= y.reached;
  }

  /** 1 + the rows whose pair is ahead of `pair` or equal to it (those reached it first). */
  rankOf(rows: Array<{ score: number; tiebreak: number }>, pair: { score: number; tiebreak: number }): number {
    return 1 + rows.filter((row) => !this.pairs.ahead(pair, row)).length;
  }
}
