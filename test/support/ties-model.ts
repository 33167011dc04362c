import { ModelWindow, RankingModel } from './ranking-model';

/**
 * The brute-force order of a `ties: first` board: RankingModel's sums, and for each item of each
 * window the tick at which it reached its current score. Every write is a tick of its own; the expiry
 * before a step is one tick for every item it changes (their order among themselves is not decided by
 * the contract: the service's is one of them, fixed once taken). On a sharded board (`shardOf` given)
 * an order across shards is known to the millisecond: items of different shards that reached equal
 * scores in the same millisecond may come in either order (the service's, fixed once taken).
 */
export class TiesModel {
  readonly sums: RankingModel;
  private tick = 0;
  private readonly known = new Map<string, Map<string, { score: number; reached: number; atMs: number }>>();

  constructor(
    readonly windows: ModelWindow[],
    private readonly shardOf?: (item: string) => number,
  ) {
    this.sums = new RankingModel(windows);
    for (const w of windows) this.known.set(w.name, new Map());
  }

  /** What expiry changed by `nowMs`, all in one tick. */
  expire(nowMs: number): void {
    this.tick++;
    this.settle(nowMs);
  }

  /** One write, after the expiry it starts with. */
  increment(nowMs: number, item: string, amount: number): void {
    this.expire(nowMs);
    this.tick++;
    this.sums.increment(nowMs, item, amount);
    this.settle(nowMs);
  }

  /** The rows scoring > 0, highest first; `reached` says when each reached its score. */
  rows(windowName: string): Array<{ item: string; score: number; reached: number }> {
    return [...this.known.get(windowName)!]
      .filter(([, entry]) => entry.score > 0)
      .map(([item, entry]) => ({ item, ...entry }))
      .sort((a, b) => b.score - a.score || a.reached - b.reached);
  }

  /** Whether `a` may be listed before `b`: a higher score, or the same reached no later. */
  mayPrecede(windowName: string, a: string, b: string): boolean {
    const known = this.known.get(windowName)!;
    const [x, y] = [known.get(a)!, known.get(b)!];
    if (x.score !== y.score) return x.score > y.score;
    if (this.shardOf && this.shardOf(a) !== this.shardOf(b) && x.atMs === y.atMs) return true;
    return x.reached <= y.reached;
  }

  private settle(nowMs: number): void {
    for (const w of this.windows) {
      const known = this.known.get(w.name)!;
      const sums = this.sums.sums(w.name, nowMs);
      for (const item of new Set([...known.keys(), ...sums.keys()])) {
        const score = sums.get(item) ?? 0;
        if (known.get(item)?.score !== score) known.set(item, { score, reached: this.tick, atMs: nowMs });
      }
    }
  }
}
