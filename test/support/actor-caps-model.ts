/**
 * The brute-force oracle of actor weights and caps (src/ranking/options/actor-caps/): every source
 * window (a board window, or a segment's) keeps each contribution (slot, actor, item) with what it adds
 * and what its events sent, and the events without an actor; reads, caps, retractions and re-weightings
 * are recomputed from the live ones. An event adding amount × weight > 0 adds at most what the cap leaves
 * of the positive part of the pair's other live slots and its own slot's contribution; a re-weighting
 * counts each live contribution again from what it sent, oldest slot first, within the cap against the
 * positive part of the pair's other live contributions.
 */
export interface ModelWindow {
  name: string;
  periodSec: number;
  intervalSec: number;
}

export interface ModelEntry {
  item: string;
  amount: number;
  actor?: string;
  segments?: string[];
}

export type ModelRow = { rank: number; item: string; score: number };

interface Contribution {
  slot: number;
  actor: string;
  item: string;
  counted: number;
  sent: number;
  events: number;
}

interface Source {
  contributions: Contribution[];
  plain: Array<{ slot: number; item: string; amount: number }>;
}

export class ActorCapsModel {
  private readonly sources = new Map<string, Source>();
  private readonly weights = new Map<string, number>();

  constructor(
    private readonly windows: ModelWindow[],
    private readonly cap: number | undefined,
  ) {}

  write(nowMs: number, entries: ModelEntry[]): void {
    // A batch goes window by window, its entries in order in each: the same per pair as one by one.
    for (const e of entries) {
      for (const segment of [undefined, ...(e.segments ?? [])]) {
        for (const w of this.windows) this.add(w, segment, nowMs, e);
      }
    }
  }

  private add(w: ModelWindow, segment: string | undefined, nowMs: number, e: ModelEntry): void {
    const source = this.source(w.name, segment);
    const slot = this.slotOf(w, nowMs);
    if (e.actor === undefined) {
      source.plain.push({ slot, item: e.item, amount: e.amount });
      return;
    }
    const actor = e.actor;
    let own = source.contributions.find((c) => c.slot === slot && c.actor === actor && c.item === e.item);
    if (!own) source.contributions.push((own = { slot, actor, item: e.item, counted: 0, sent: 0, events: 0 }));
    const others = this.live(w, nowMs, source.contributions).filter(
      (c) => c !== own && c.actor === actor && c.item === e.item,
    );
    const counted = this.withinCap(e.amount * (this.weights.get(actor) ?? 1), positivePart(others) + own.counted);
    own.counted += counted;
    own.sent += e.amount;
    own.events += 1;
  }

  private withinCap(counted: number, others: number): number {
    if (this.cap === undefined || counted <= 0) return counted;
    return Math.max(0, Math.min(counted, this.cap - others));
  }

  /**
   * Sets the actor's weight and counts its live contributions again (a PUT of the weight the actor has
   * changes nothing); answers its live events (longest window).
   */
  reweight(nowMs: number, actor: string, weight: number, ledger: string): number {
    const unchanged = (this.weights.get(actor) ?? 1) === weight;
    this.weights.set(actor, weight);
    for (const [key, source] of unchanged ? [] : this.sources) {
      const w = this.windows.find((x) => x.name === key.split('~')[0])!;
      const live = this.live(w, nowMs, source.contributions);
      const own = live.filter((c) => c.actor === actor).sort((a, b) => a.slot - b.slot);
      for (const c of own) {
        const others = live.filter((o) => o !== c && o.actor === actor && o.item === c.item);
        c.counted = this.withinCap(c.sent * weight, positivePart(others));
      }
    }
    const w = this.windows.find((x) => x.name === ledger)!;
    return this.live(w, nowMs, this.source(ledger, undefined).contributions)
      .filter((c) => c.actor === actor)
      .reduce((s, c) => s + c.events, 0);
  }

  /** Takes an actor's (or an item's) events out; answers the live ones in `ledger`: events and amount. */
  retract(nowMs: number, target: 'actor' | 'item', id: string, ledger: string): { events: number; amount: number } {
    const w = this.windows.find((x) => x.name === ledger)!;
    const source = this.source(ledger, undefined);
    const hit = (c: { actor?: string; item: string }) => (target === 'actor' ? c.actor === id : c.item === id);
    const live = this.live(w, nowMs, source.contributions).filter(hit);
    const plain = target === 'item' ? this.live(w, nowMs, source.plain).filter(hit) : [];
    for (const s of this.sources.values()) {
      s.contributions = s.contributions.filter((c) => !hit(c));
      if (target === 'item') s.plain = s.plain.filter((p) => !hit(p));
    }
    return {
      events: live.reduce((sum, c) => sum + c.events, 0),
      amount: live.reduce((sum, c) => sum + c.counted, 0) + plain.reduce((sum, p) => sum + p.amount, 0),
    };
  }

  /**
   * Takes one event of 1 back from the contribution of `actor` to `item` in the slot of `atMs` of every
   * window still holding that slot (an unlike; the like's actor is its user, never weighed or capped).
   */
  takeBack(nowMs: number, atMs: number, actor: string, item: string): void {
    for (const w of this.windows) {
      const source = this.source(w.name, undefined);
      const slot = this.slotOf(w, atMs);
      const own = this.live(w, nowMs, source.contributions).find(
        (c) => c.slot === slot && c.actor === actor && c.item === item,
      );
      if (!own) continue;
      own.counted -= 1;
      own.sent -= 1;
      own.events -= 1;
      if (own.events === 0) source.contributions = source.contributions.filter((c) => c !== own);
    }
  }

  /**
   * A window's listing with only the items that have at least `minActors` distinct actors there
   * (`?minActors=`): rows keep their rank in the whole listing.
   */
  withActors(window: string, nowMs: number, minActors: number, segment?: string): ModelRow[] {
    const actors = new Map(this.listing(window, nowMs, segment, true).map((row) => [row.item, row.score]));
    return this.listing(window, nowMs, segment).filter((row) => (actors.get(row.item) ?? 0) >= minActors);
  }

  /** A window's listing (or a unique view's over `window`: distinct actors with a live contribution). */
  listing(window: string, nowMs: number, segment?: string, unique = false): ModelRow[] {
    const w = this.windows.find((x) => x.name === window)!;
    const source = this.source(window, segment);
    const scores = new Map<string, number>();
    const live = this.live(w, nowMs, source.contributions);
    if (unique) {
      for (const item of new Set(live.map((c) => c.item)))
        scores.set(item, new Set(live.filter((c) => c.item === item).map((c) => c.actor)).size);
    } else {
      for (const c of live) scores.set(c.item, (scores.get(c.item) ?? 0) + c.counted);
      for (const p of this.live(w, nowMs, source.plain)) scores.set(p.item, (scores.get(p.item) ?? 0) + p.amount);
    }
    const rows = [...scores]
      .filter(([, score]) => score > 0)
      .sort(([a, sa], [b, sb]) => sb - sa || Buffer.compare(Buffer.from(b), Buffer.from(a)));
    return rows.map(([item, score]) => ({ rank: 1 + rows.filter(([, s]) => s > score).length, item, score }));
  }

  /**
   * The most any actor adds to any item in a live window, now or later as its older slots leave (the
   * cap's invariant): the largest sum of a run of a pair's newest live slots.
   */
  mostHeld(nowMs: number): number {
    let most = 0;
    for (const [key, source] of this.sources) {
      const w = this.windows.find((x) => x.name === key.split('~')[0])!;
      const pairs = new Map<string, Contribution[]>();
      for (const c of this.live(w, nowMs, source.contributions)) {
        const pair = `${c.actor}\u001f${c.item}`;
        pairs.set(pair, [...(pairs.get(pair) ?? []), c]);
      }
      for (const slots of pairs.values()) {
        let run = 0;
        for (const c of slots.sort((a, b) => b.slot - a.slot)) most = Math.max(most, (run += c.counted));
      }
    }
    return most;
  }

  private source(window: string, segment: string | undefined): Source {
    const key = segment === undefined ? window : `${window}~${segment}`;
    let source = this.sources.get(key);
    if (!source) this.sources.set(key, (source = { contributions: [], plain: [] }));
    return source;
  }

  private slotOf(w: ModelWindow, nowMs: number): number {
    const nowSec = Math.floor(nowMs / 1000);
    return nowSec - (nowSec % w.intervalSec);
  }

  private live<T extends { slot: number }>(w: ModelWindow, nowMs: number, rows: T[]): T[] {
    const current = this.slotOf(w, nowMs);
    return rows.filter((r) => r.slot > current - w.periodSec);
  }
}

/** What the contributions add where above 0, each on its own. */
function positivePart(contributions: Contribution[]): number {
  return contributions.reduce((sum, c) => sum + Math.max(0, c.counted), 0);
}
