import { Injectable } from '@nestjs/common';
import { isRedisWrongNodeError } from '../../common/redis-errors';
import { RedisService } from '../../redis/redis.service';
import { RedisFunctions } from '../../redis/redis-functions';
import { PreparedBoard, ShardKeys } from '../core/board';
import { guard } from '../core/ranking.errors';
import { LOOKUP_IDS_PER_CALL } from '../core/ranking.limits';
import { tiebreakMarkOrder, tiebreakOfMark } from '../options/tiebreak/tiebreak.option';
import type { LookupRow } from '../core/ranking.types';
import { boardCall } from '../core/script-call';
import type { WindowConfig } from '../core/window-math';
import { HistoryStore } from '../history/history.store';
import { AheadOf, LookupNodeReply, LookupReply, LookupFunctions } from './lookup.functions';
import {
  lookupInParts,
  nodeIdsPerCall,
  nodeParts,
  scoresPerCountCall,
  shardsPerCountCall,
  type PartCall,
} from './node-parts';
import { RankingSettings } from '../core/ranking.settings';
import { sliceStore } from '../core/slice-store';

const NOTHING_TO_COUNT: AheadOf = { scores: [], marks: [] };

/** Items above each score a set of shards counted, and whether one of them drains. */
interface ShardCount {
  draining: boolean;
  above: number[];
}

/** A lookup of one window of a board at one time. */
export interface LookupRead {
  board: PreparedBoard;
  window: WindowConfig;
  nowMs: number;
}

/** What a lookup asks: board-wide ranks (or only scores, for ranks among the ids), data or not. */
export interface LookupAsk {
  items: string[];
  boardRanks: boolean;
  withData: boolean;
}

/**
 * Lookups of ids in one window, in calls of at most LOOKUP_IDS_PER_CALL ids. Unsharded: lookup calls,
 * one after the other. Sharded, every shard on one Redis node: lookup_node calls. Otherwise each shard
 * holding some of the ids answers their scores, then, for board ranks, every shard counts its items
 * above those scores (calls per Redis node, in parallel): rank = 1 + the items above on all. The calls
 * are not one snapshot: a write landing between two of them shows in the later call's rows only.
 */
@Injectable()
export class LookupStore extends sliceStore(LookupFunctions) {
  constructor(
    redis: RedisService,
    functions: RedisFunctions,
    part: LookupFunctions,
    settings: RankingSettings,
    private readonly history: HistoryStore,
  ) {
    super(redis, functions, part, settings);
  }

  async lookup(read: LookupRead, ask: LookupAsk): Promise<{ draining: boolean; rows: LookupRow[] }> {
    const { board } = read;
    if (!board.sharded) {
      const chunks = chunksOf(ask.items, LOOKUP_IDS_PER_CALL);
      // One after the other: sent at once, the calls would reach Redis in one read and run back to back.
      const replies: LookupReply[] = [];
      for (const items of chunks)
        replies.push(await this.call(read, board.shards[0], items, NOTHING_TO_COUNT, ask.withData));
      const rows = chunks.flatMap((items, c) =>
        items.map((item, i) => rowOf(item, replies[c], i, replies[c].ranks[i], ask.withData)),
      );
      const marks = replies.flatMap((reply) => reply.marks);
      return { draining: replies.some((reply) => reply.draining), rows: withTiebreaks(board, rows, marks) };
    }
    const onOneNode = await this.lookupOnOneNode(read, ask);
    if (onOneNode) return { draining: false, rows: onOneNode };
    return this.lookupInTwoRounds(read, ask);
  }

  /**
   * Calls a lookup of `ids` ids makes on `board` at most, each one read of the client's budget: on one
   * shard, calls of at most LOOKUP_IDS_PER_CALL ids; on a sharded board whose shards one node serves,
   * calls of nodeIdsPerCall ids, a call per part of the shards (nodeParts; the re-counts of parts
   * that read an id's standing apart from its own shard's part, a write between them, are not
   * charged: at most as many again); otherwise one call per shard holding some of the ids
   * (per LOOKUP_IDS_PER_CALL), then for board ranks the count calls of each node.
   */
  plannedCalls(board: PreparedBoard, ids: number, boardRanks: boolean): number {
    if (!board.sharded) return Math.ceil(ids / LOOKUP_IDS_PER_CALL);
    const nodes = this.redis.groupByNode(board.shards.map((shard) => shard.keys.cfg()));
    if (nodes.length === 1) {
      const perCall = nodeIdsPerCall(board, boardRanks);
      return Math.ceil(ids / perCall) * nodeParts(board, boardRanks, perCall).length;
    }
    const owned = Math.min(board.shards.length, ids) + Math.floor(ids / LOOKUP_IDS_PER_CALL);
    if (!boardRanks) return owned;
    const parts = Math.ceil(ids / scoresPerCountCall(board.config));
    const perCall = shardsPerCountCall(board.config, Math.min(ids, scoresPerCountCall(board.config)));
    return owned + parts * nodes.reduce((calls, node) => calls + Math.ceil(node.length / perCall), 0);
  }

  /**
   * A sharded lookup in two rounds: each shard answers the scores of the ids it holds (calls of at
   * most LOOKUP_IDS_PER_CALL ids, in parallel), then for board ranks every shard counts above them.
   */
  private async lookupInTwoRounds(read: LookupRead, ask: LookupAsk): Promise<{ draining: boolean; rows: LookupRow[] }> {
    const { board } = read;
    const homes = new Map<ShardKeys, string[]>();
    for (const item of ask.items) homes.set(board.shardOf(item), [...(homes.get(board.shardOf(item)) ?? []), item]);
    const parts = [...homes].flatMap(([shard, ids]) =>
      chunksOf(ids, LOOKUP_IDS_PER_CALL).map((chunk) => ({ shard, chunk })),
    );
    const [owned, previous] = await Promise.all([
      Promise.all(parts.map(({ shard, chunk }) => this.call(read, shard, chunk, NOTHING_TO_COUNT, ask.withData))),
      this.history.previousRanks(board, read.window, read.nowMs),
    ]);
    const found = new Map<string, LookupRow>();
    const marks = new Map<LookupRow, string>();
    parts.forEach(({ chunk }, s) =>
      chunk.forEach((item, i) => {
        const row = {
          ...rowOf(item, owned[s], i, owned[s].ranks[i], ask.withData),
          previousRank: previous.get(item) ?? null,
        };
        found.set(item, row);
        marks.set(row, owned[s].marks[i]);
      }),
    );
    let draining = owned.some((reply) => reply.draining);
    if (ask.boardRanks) draining = (await this.rankAcrossShards(read, [...found.values()], marks)) || draining;
    const rows = ask.items.map((item) => found.get(item) as LookupRow);
    return {
      draining,
      rows: withTiebreaks(
        board,
        rows,
        rows.map((row) => marks.get(row) ?? ''),
      ),
    };
  }

  /**
   * The whole lookup in one round when one Redis node serves every shard (lookup_node), its ids split
   * so that no call takes more than nodeIdsPerCall, a lone id whose counts pass
   * LOOKUP_NODE_UNITS_PER_CALL counted in parts of the shards (nodeParts, nodeChunk), the calls in parallel;
   * previous ranks from the history store's per-slot cache. Null when the two rounds must answer
   * instead (shards on several nodes, a shard with expired slots to drain first, or a node that no
   * longer serves one).
   */
  private async lookupOnOneNode(read: LookupRead, ask: LookupAsk): Promise<LookupRow[] | null> {
    const { board, window, nowMs } = read;
    if (this.redis.groupByNode(board.shards.map((shard) => shard.keys.cfg())).length > 1) return null;
    const perCall = nodeIdsPerCall(board, ask.boardRanks);
    const chunks = chunksOf(ask.items, perCall);
    const parts = nodeParts(board, ask.boardRanks, perCall);
    try {
      const [replies, previous] = await Promise.all([
        Promise.all(chunks.map((items) => this.nodeChunk(read, ask, items, parts))),
        this.history.previousRanks(board, window, nowMs),
      ]);
      const answered = replies.filter((reply) => reply !== null);
      if (answered.length < replies.length) return null;
      const rows = chunks.flatMap((items, c) => items.map((item, i) => nodeRow(item, answered[c], i, previous, ask)));
      return withTiebreaks(
        board,
        rows,
        answered.flatMap((reply) => reply.marks),
      );
    } catch (error) {
      if (!isRedisWrongNodeError(error)) throw error;
      return null;
    }
  }

  /** The lookup_node answer for `items`: calls per part of the shards (lookupInParts). */
  private nodeChunk(read: LookupRead, ask: LookupAsk, items: string[], parts: number[][]): Promise<LookupNodeReply> {
    const { board, nowMs, window } = read;
    const homes = items.map((item) => board.shards.indexOf(board.shardOf(item)));
    return lookupInParts(homes, parts, ask.withData, ({ ids, counted, withData, given }: PartCall) =>
      guard(
        this.functions.call(this.fns.lookupNode, {
          board,
          shards: board.shards,
          nowMs,
          window,
          boardRanks: ask.boardRanks,
          items: ids.map((i) => items[i]),
          homes: ids.map((i) => homes[i]),
          counted,
          withData,
          given,
        }),
      ),
    );
  }

  /**
   * Sets each listed row's board rank: 1 + the items ahead of its score on every shard (on a sharded `ties:
   * first` board, ahead of its score and tie mark), counted in one call per Redis node
   * (lookup_count_shards), then shard by shard where that call could not (expired data to drain first,
   * or a node that no longer serves it). One count per distinct (score, mark). Answers whether a shard drains.
   */
  private async rankAcrossShards(read: LookupRead, rows: LookupRow[], marks: Map<LookupRow, string>): Promise<boolean> {
    const keyOf = (row: LookupRow) => `${row.score}\n${marks.get(row) ?? ''}`;
    // Listed ids hold their own shard's rank so far (any sign on a max / min / last board).
    const distinct = new Map(rows.filter((row) => row.rank !== null).map((row) => [keyOf(row), row]));
    if (distinct.size === 0) return false;
    const ahead = {
      scores: [...distinct.values()].map((row) => row.score),
      marks: [...distinct.values()].map((row) => marks.get(row) ?? ''),
    };
    const { shards } = read.board;
    const groups = this.redis.groupByNode(shards.map((shard) => shard.keys.cfg()));
    const counts = (
      await Promise.all(
        groups.map((group) =>
          this.countOnNode(
            read,
            ahead,
            group.map((i) => shards[i]),
          ),
        ),
      )
    ).flat();
    const keys = [...distinct.keys()];
    const above = new Map(keys.map((key, i) => [key, counts.reduce((sum, count) => sum + count.above[i], 0)]));
    for (const row of rows) row.rank = row.rank !== null ? 1 + (above.get(keyOf(row)) ?? 0) : null;
    return counts.some((count) => count.draining);
  }

  /**
   * Counts above on the shards one node serves: the scores in parts of scoresPerCountCall, each counted
   * in calls of shardsPerCountCall shards (LOOKUP_NODE_UNITS_PER_CALL weighted units at most), all in
   * parallel, then shard by shard where such a call could not; a count answers 0 above other parts' scores.
   */
  private async countOnNode(read: LookupRead, ahead: AheadOf, shards: ShardKeys[]): Promise<ShardCount[]> {
    const parts = chunksOf(Array.from(ahead.scores.keys()), scoresPerCountCall(read.board.config));
    const counted = await Promise.all(
      parts.map((part) => {
        const scores = part.map((i) => ahead.scores[i]);
        return this.countPartOnNode(read, { scores, marks: part.map((i) => ahead.marks[i]) }, shards);
      }),
    );
    return counted.flatMap((counts, p) =>
      counts.map(({ draining, above }) => ({
        draining,
        above: ahead.scores.map((_, i) => above[i - parts[p][0]] ?? 0),
      })),
    );
  }

  private async countPartOnNode(read: LookupRead, ahead: AheadOf, shards: ShardKeys[]): Promise<ShardCount[]> {
    if (shards.length === 1) return [await this.call(read, shards[0], [], ahead, false)];
    const groups = chunksOf(shards, shardsPerCountCall(read.board.config, ahead.scores.length));
    const counted = await Promise.all(groups.map((group) => this.countGroup(read, ahead, group)));
    return counted.flat();
  }

  private async countGroup(read: LookupRead, ahead: AheadOf, shards: ShardKeys[]): Promise<ShardCount[]> {
    const counts: ShardCount[] = [];
    let uncounted = shards;
    try {
      const call = { board: read.board, shards, nowMs: read.nowMs, window: read.window, ahead };
      const reply = await guard(this.functions.call(this.fns.lookupCountShards, call));
      counts.push({ draining: false, above: reply.above });
      uncounted = reply.pending;
    } catch (error) {
      if (!isRedisWrongNodeError(error)) throw error;
    }
    return [...counts, ...(await Promise.all(uncounted.map((shard) => this.call(read, shard, [], ahead, false))))];
  }

  private call(read: LookupRead, shard: ShardKeys, items: string[], ahead: AheadOf, withData: boolean) {
    const call = { ...boardCall(read.board, shard, read.nowMs, this.budgetFields), window: read.window };
    return guard(this.functions.call(this.fns.lookup, { ...call, items, ahead, withData }));
  }
}

/** `list` in consecutive parts of at most `size`. */
function chunksOf<T>(list: T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(list.length / size) }, (_, c) => list.slice(c * size, (c + 1) * size));
}

/** The row of the `i`-th id a lookup_node call answered, with its previous rank on the board. */
function nodeRow(
  item: string,
  reply: NonNullable<LookupNodeReply>,
  i: number,
  previous: Map<string, number>,
  ask: LookupAsk,
): LookupRow {
  const rank = reply.ranks[i];
  const row = { item, score: reply.scores[i], rank: rank > 0 ? rank : null, previousRank: previous.get(item) ?? null };
  const shown = rank < 0 ? { ...row, hidden: true as const } : row;
  return ask.withData ? { ...shown, data: reply.data[i] } : shown;
}

/** The row of the `i`-th id a shard answered; `rank` its rank as known so far (0: none). */
function rowOf(item: string, reply: LookupReply, i: number, rank: number, withData: boolean): LookupRow {
  const row = {
    item,
    score: reply.scores[i],
    rank: rank > 0 ? rank : null,
    previousRank: reply.previousRanks[i] || null,
  };
  const shown = rank < 0 ? { ...row, hidden: true as const } : row;
  return withData ? { ...shown, data: reply.data[i] } : shown;
}

/** On a board with a tiebreak, each row the window holds with its pair's tiebreak (its mark's). */
function withTiebreaks(board: PreparedBoard, rows: LookupRow[], marks: string[]): LookupRow[] {
  const order = tiebreakMarkOrder(board.config);
  if (order === undefined) return rows;
  return rows.map((row, i) => {
    const tiebreak = tiebreakOfMark(order, marks[i]);
    return tiebreak === undefined ? row : { ...row, tiebreak };
  });
}
