import { Injectable } from '@nestjs/common';
import { PreparedBoard, ShardKeys } from '../core/board';
import { isRedisWrongNodeError } from '../../common/redis-errors';
import { guard } from '../core/ranking.errors';
import { SPREAD_COUNTS_PER_CALL, SPREAD_SHARD_WEIGHT } from '../core/ranking.limits';
import { boardCall } from '../core/script-call';
import type { WindowConfig } from '../core/window-math';
import {
  SpreadPick,
  SpreadReply,
  SpreadShardsReply,
  StandingFunctions,
  TailTopAt,
  TailTopReply,
} from './standing.functions';
import { TAIL_CALLS_PER_READ, TAIL_LOOKS_PER_EXPIRE_FIELD, TAIL_PART_EXPIRE_FIELDS } from '../options/tail/tail.option';
import { sliceStore } from '../core/slice-store';

/** A read of one window of a board at one time. */
export interface WindowRead {
  board: PreparedBoard;
  window: WindowConfig;
  nowMs: number;
}

/** A record's place over every shard: items ahead of it, items listed, and whether a shard still drains. */
export interface ScorePlace {
  draining: boolean;
  /** Whether the window would list a record of that score (any score on max / min / last, above 0 on sum). */
  counted: boolean;
  ahead: number;
  listed: number;
}

/** A pick asked of every shard, with the items its range held over them as counted (sizes the calls). */
type HeldPick = SpreadPick & { held: number };

/** Counts up to bounds summed over the shards, each pick's scores over them; `cut`: a pick may be short. */
export interface PickedCounts {
  counts: number[];
  picked: number[][];
  cut: boolean;
}

/**
 * A part of a distribution's round: SpreadReply with its picks' scores (`cut`: one may be short) and
 * the most items a shard of it holds (Infinity: not known).
 */
export type SpreadPart = SpreadReply & Pick<SpreadShardsReply, 'picked' | 'cut' | 'most'>;

interface SpreadScope {
  read: WindowRead;
  bounds: readonly string[];
  picks: readonly HeldPick[];
  /** What a shard weighs in a call, in counts, its picks' scores aside. */
  perShard: number;
  /** A shard holding more items is read alone (the calls' sizes assumed it). */
  mostHeld: number;
}

/** A shard's part read alone: no picks (`cut`: it was asked some), its items held not known. */
function alone(part: SpreadReply, cut: boolean): SpreadPart {
  return { ...part, picked: [], cut, most: Infinity };
}

/**
 * Reads of a window by score: a record's place (one score_rank call per shard, all in one round) and
 * the distribution (score_spread on a shard, score_spread_shards over the shards a node serves, a
 * bounded number of counts per call).
 */
@Injectable()
export class StandingStore extends sliceStore(StandingFunctions) {
  /**
   * Items ahead of a record of `score` (with `equalAhead`, items holding that score too; with `mark`, a
   * tiebreak's, items of that score and a better tiebreak too) over the board.
   */
  async place(read: WindowRead, score: number, equalAhead: boolean, mark?: string): Promise<ScorePlace> {
    if (read.board.sharded) this.admit();
    const replies = await Promise.all(
      read.board.shards.map((shard) =>
        guard(this.functions.call(this.fns.scoreRank, { ...this.on(read, shard), score, equalAhead, mark })),
      ),
    );
    return {
      draining: replies.some((reply) => reply.draining),
      counted: replies[0].counted,
      ahead: replies.reduce((sum, reply) => sum + reply.ahead, 0),
      listed: replies.reduce((sum, reply) => sum + reply.listed, 0),
    };
  }

  /**
   * The parts of the distribution for the same bounds and positions, in one round: on one shard its
   * part; sharded, the parts of the shards each node serves (spreadShards; a sharded read asks no positions).
   */
  async spread(read: WindowRead, bounds: readonly string[], positions: readonly number[]): Promise<SpreadPart[]> {
    const { shards } = read.board;
    if (!read.board.sharded) return [alone(await this.shardSpread(read, shards[0], bounds, positions), false)];
    return this.spreadShards(read, bounds, [], Infinity);
  }

  /**
   * A sharded board's listed items up to each bound and each pick's scores, over every shard, in one
   * round; `mostHeld`: the most items a shard held at a round before (SpreadPart's `most`).
   */
  async countAndPick(
    read: WindowRead,
    bounds: readonly string[],
    picks: readonly HeldPick[],
    mostHeld: number,
  ): Promise<PickedCounts> {
    const parts = await this.spreadShards(read, bounds, picks, mostHeld);
    return {
      counts: bounds.map((_, i) => parts.reduce((sum, part) => sum + part.counts[i], 0)),
      picked: picks.map((_, p) => parts.flatMap((part) => part.picked[p] ?? [])),
      cut: parts.some((part) => part.cut),
    };
  }

  /**
   * The summed parts of the shards each node serves (score_spread_shards, at most SPREAD_COUNTS_PER_CALL
   * weighted counts a call: a shard's bounds, or its `mostHeld` scores when no more than its bounds
   * (read whole, the bounds counted from them), a pick's expected scores counted twice; the calls in
   * parallel), then shard by shard where such a call could not (expired data to drain first, a shard
   * grown past `mostHeld`, or a node that no longer serves a shard: their picks unread, the round cut).
   */
  private async spreadShards(
    read: WindowRead,
    bounds: readonly string[],
    picks: readonly HeldPick[],
    shardHeld: number,
  ): Promise<SpreadPart[]> {
    const { shards } = read.board;
    this.admit();
    const mostHeld = shardHeld <= bounds.length ? shardHeld : Number.MAX_SAFE_INTEGER;
    const perShard = SPREAD_SHARD_WEIGHT + Math.min(shardHeld, bounds.length) + picks.length;
    const picked = picks.reduce((sum, pick) => sum + pick.held, 0);
    const perCall = Math.max(
      1,
      Math.floor(SPREAD_COUNTS_PER_CALL / (perShard + 2 * Math.ceil(picked / shards.length))),
    );
    const groups = this.redis
      .groupByNode(shards.map((shard) => shard.keys.cfg()))
      .flatMap((node) =>
        Array.from({ length: Math.ceil(node.length / perCall) }, (_, g) =>
          node.slice(g * perCall, (g + 1) * perCall).map((i) => shards[i]),
        ),
      );
    const scope = { read, bounds, picks, perShard, mostHeld };
    return (await Promise.all(groups.map((group) => this.spreadGroup(scope, group)))).flat();
  }

  private async spreadGroup(scope: SpreadScope, shards: ShardKeys[]): Promise<SpreadPart[]> {
    const { read, bounds, picks } = scope;
    let unread = shards;
    const parts: SpreadPart[] = [];
    try {
      const entries = Math.max(0, SPREAD_COUNTS_PER_CALL - shards.length * scope.perShard);
      const { board, nowMs, window } = read;
      const call = { board, shards, nowMs, window, bounds, picks, entries, mostHeld: scope.mostHeld };
      const { pending, ...part } = await guard(this.functions.call(this.fns.scoreSpreadShards, call));
      if (pending.length < shards.length) parts.push({ ...part, draining: false, scores: [] });
      unread = pending;
    } catch (error) {
      if (!isRedisWrongNodeError(error)) throw error;
    }
    const unreadParts = await Promise.all(unread.map((shard) => this.shardSpread(read, shard, bounds, [])));
    return [...parts, ...unreadParts.map((part) => alone(part, picks.length > 0))];
  }

  private shardSpread(read: WindowRead, shard: ShardKeys, bounds: readonly string[], positions: readonly number[]) {
    return guard(this.functions.call(this.fns.scoreSpread, { ...this.on(read, shard), bounds, positions }));
  }

  /**
   * Every shard's best `limit` rows of a `tail` board's window with their dropped bounds. A shard's
   * calls each answer the next part of its page while the Lua says there is more: a part stops before a
   * row its filter bits did not reach (what it learnt is cached). The first call expires and prunes
   * within the store's budget; the calls after it within TAIL_PART_EXPIRE_FIELDS, their work the looks.
   * After TAIL_CALLS_PER_READ calls the rest comes without filter bits (the bounds cached, else the
   * shard's hidden mass, looser but true).
   */
  tailTop(read: WindowRead, limit: number): Promise<TailTopReply[]> {
    if (read.board.sharded) this.admit();
    return Promise.all(read.board.shards.map((shard) => this.tailShard(read, shard, limit)));
  }

  private async tailShard(read: WindowRead, shard: ShardKeys, limit: number): Promise<TailTopReply> {
    const looks = Math.floor(this.budgetFields * TAIL_LOOKS_PER_EXPIRE_FIELD);
    const answer: TailTopReply = { draining: false, hidden: 0, rows: [] };
    let at: TailTopAt = { page: '', from: 0 };
    for (let calls = 0; ; calls++) {
      const part = await guard(
        this.functions.call(this.fns.tailTop, {
          ...boardCall(read.board, shard, read.nowMs, calls === 0 ? this.budgetFields : TAIL_PART_EXPIRE_FIELDS),
          window: read.window,
          limit,
          looks: calls < TAIL_CALLS_PER_READ ? looks : 0,
          at,
        }),
      );
      answer.draining ||= part.draining;
      answer.hidden = Math.max(answer.hidden, part.hidden);
      answer.rows.push(...part.rows);
      if (!part.more) return answer;
      at = part.next;
    }
  }

  private on(read: WindowRead, shard: ShardKeys) {
    return { ...boardCall(read.board, shard, read.nowMs, this.budgetFields), window: read.window };
  }
}
