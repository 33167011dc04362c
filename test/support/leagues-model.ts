import { shardOf } from '../../src/ranking/core/shard-math';

/**
 * Leagues by brute force: every period's placements in arrival order and its sums, tiers moved when a
 * period closes by sorting each cohort, with no cursor, marker or lazy roll. What the Redis leagues
 * (leagues_lib.lua) must answer. On `shards` shards each shard fills cohorts of its own items, its
 * n-th cohort of a tier numbered (n - 1) × shards + shard + 1. With `ties: 'first'` equal scores rank
 * in the order the members reached them (every event moves a sum: the member reached it then).
 */
export interface LeagueRule {
  size: number;
  tiers: number;
  promote: number;
  relegate: number;
  /** Absent: 1. */
  shards?: number;
  /** Absent: shared. */
  ties?: 'shared' | 'first';
}

/** A cohort member's standing: its competition rank (shared) or place (first). */
export interface ModelRow {
  item: string;
  score: number;
  rank: number;
}

export interface ModelMove {
  item: string;
  fromTier: number;
  toTier: number;
  cohort: number;
  rank: number;
}

interface Period {
  start: number;
  /** item -> [tier, cohort] */
  placed: Map<string, [number, number]>;
  sums: Map<string, number>;
  /** item -> when it reached its sum (the model's event count then) */
  reached: Map<string, number>;
  /** "<shard>:<tier>" -> items placed */
  fill: Map<string, number>;
}

export class LeaguesModel {
  private readonly tier = new Map<string, number>();
  private current: Period | undefined;
  private events = 0;
  /** Moves of each closed period, by its start. */
  readonly moves = new Map<number, ModelMove[]>();

  constructor(private readonly rule: LeagueRule) {}

  /** An event of `amount` for `item` in the period starting `start` (a later start closes the current one). */
  add(start: number, item: string, amount: number): void {
    this.enter(start);
    const period = this.current!;
    if (!period.placed.has(item)) {
      const tier = this.tier.get(item) ?? 1;
      const shards = this.rule.shards ?? 1;
      const shard = shardOf(item, shards);
      const placed = (period.fill.get(`${shard}:${tier}`) ?? 0) + 1;
      period.fill.set(`${shard}:${tier}`, placed);
      period.placed.set(item, [tier, Math.floor((placed - 1) / this.rule.size) * shards + shard + 1]);
    }
    period.sums.set(item, (period.sums.get(item) ?? 0) + amount);
    period.reached.set(item, ++this.events);
  }

  /** The period starting `start` is the current one: the one before closes (its moves are made). */
  enter(start: number): void {
    if (this.current?.start === start) return;
    if (this.current) this.close(this.current);
    this.current = { start, placed: new Map(), sums: new Map(), reached: new Map(), fill: new Map() };
  }

  /** An item's standing in the current period (undefined: not placed in it). */
  standing(start: number, item: string) {
    const period = this.current;
    if (!period || period.start !== start) return undefined;
    const at = period.placed.get(item);
    if (!at) return undefined;
    const rows = this.ranked(period, at[0], at[1]);
    const row = rows.find((r) => r.item === item)!;
    return { tier: at[0], cohort: at[1], score: row.score, rank: row.rank, members: rows.length };
  }

  /** A cohort's page of the current period: best first (equal shared ranks: greater id first). */
  cohortRows(start: number, tier: number, cohort: number): ModelRow[] {
    if (!this.current || this.current.start !== start) return [];
    return this.ranked(this.current, tier, cohort);
  }

  /** A cohort's members in their order, ranked by the rule's ties. */
  private ranked(period: Period, tier: number, cohort: number): ModelRow[] {
    const rows = this.members(period, tier, cohort);
    if (this.rule.ties === 'first') {
      const when = (item: string) => period.reached.get(item)!;
      rows.sort(([i, s], [j, t]) => t - s || when(i) - when(j));
      return rows.map(([item, score], place) => ({ item, score, rank: place + 1 }));
    }
    return rows
      .map(([item, score]) => ({ item, score, rank: 1 + rows.filter(([, s]) => s > score).length }))
      .sort((x, y) => x.rank - y.rank || (x.item < y.item ? 1 : -1));
  }

  private members(period: Period, tier: number, cohort: number): Array<[string, number]> {
    return [...period.placed]
      .filter(([, at]) => at[0] === tier && at[1] === cohort)
      .map(([item]): [string, number] => [item, period.sums.get(item)!]);
  }

  private close(period: Period): void {
    const moves: ModelMove[] = [];
    const cohorts = new Set([...period.placed.values()].map(([t, c]) => `${t}:${c}`));
    for (const key of cohorts) {
      const [tier, cohort] = key.split(':').map(Number);
      const rows = this.ranked(period, tier, cohort);
      for (const { item, score, rank } of rows) {
        const strictBottom = rows.length - rank + 1;
        const fromBottom = this.rule.ties === 'first' ? strictBottom : 1 + rows.filter((r) => r.score < score).length;
        let to = tier;
        if (rank <= this.rule.promote && tier < this.rule.tiers) to = tier + 1;
        else if (fromBottom <= this.rule.relegate && tier > 1) to = tier - 1;
        this.tier.set(item, to);
        if (to !== tier) moves.push({ item, fromTier: tier, toTier: to, cohort, rank });
      }
    }
    this.moves.set(period.start, moves);
  }
}
