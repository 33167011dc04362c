import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../common/config';
import { SpanTooCostlyError } from '../../common/errors';
import { RedisService } from '../../redis/redis.service';
import { PreparedBoard, ShardKeys } from '../core/board';
import { guard } from '../core/ranking.errors';
import { SPAN_MAX_FIELDS } from '../core/ranking.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import type { ListedItem, ScoredItem, Standing } from '../core/ranking.types';
import { mergeListings, mergeShardHeads, rankRows } from '../core/shard-math';
import type { WindowConfig } from '../core/window-math';
import { RANKING } from '../ranking.functions';
import { SpanFigures, SpanQuestion } from './spans.functions';

const S = RANKING.functions;

/** A read of a window's newest `spanSec` seconds of slots at one time. */
export interface SpanRead {
  board: PreparedBoard;
  window: WindowConfig;
  nowMs: number;
  spanSec: number;
}

type Answer<Mode extends SpanFigures['mode']> = Extract<SpanFigures, { mode: Mode }> & { listed: number };

/** The reply to a question of `mode`: decode answers the question asked, so another mode is a bug. */
function answerOf<Mode extends SpanFigures['mode']>(mode: Mode, reply: SpanFigures & { listed: number }): Answer<Mode> {
  if (reply.mode !== mode) throw new Error(`read_span answered ${reply.mode} to a ${mode} question`);
  return reply as Answer<Mode>;
}

/**
 * Span reads, unsharded (one script call) and sharded (fan-out, merge, counts over the other shards),
 * in the same board order and competition ranks as a window's reads. Nothing is expired or drained:
 * a span's slots all lie inside the window's period, and each read sums them afresh.
 */
@Injectable()
export class SpansStore {
  private readonly budgetFields: number;

  constructor(
    private readonly redis: RedisService,
    config: AppConfig,
  ) {
    this.budgetFields = config.EXPIRE_CHUNK;
    redis.defineFunctions([RANKING.library]);
  }

  async top(read: SpanRead, offset: number, limit: number): Promise<ListedItem[]> {
    const { board } = read;
    if (!board.sharded) {
      const head = await this.ask(read, board.shards[0], { mode: 'head', offset, count: limit });
      return rankRows(head.rows, offset, head.higherThanFirst);
    }
    const depth = offset + limit;
    const { rows } = await mergeShardHeads(board.shards.length, depth, async (shard, from, count) => {
      this.redis.admit();
      return (await this.ask(read, board.shards[shard], { mode: 'head', offset: from, count })).rows;
    });
    return rankRows(rows, 0, 0).slice(offset, depth);
  }

  async item(read: SpanRead, item: string): Promise<{ standing: Standing; ranked: number }> {
    const { board } = read;
    const home = board.shardOf(item);
    const own = await this.ask(read, home, { mode: 'count', item });
    const others = await Promise.all(
      board.shards
        .filter((shard) => shard !== home)
        .map((shard) => this.ask(read, shard, { mode: 'count', item, score: own.score })),
    );
    const above = others.reduce((sum, answer) => sum + answer.above, own.above);
    const ranked = others.reduce((sum, answer) => sum + answer.listed, own.listed);
    return { standing: { score: own.score, rank: own.score > 0 ? above + 1 : null }, ranked };
  }

  async around(read: SpanRead, item: string, radius: number): Promise<ListedItem[]> {
    const { board } = read;
    if (!board.sharded) {
      const near = await this.ask(read, board.shards[0], { mode: 'near', item, radius });
      if (near.score <= 0) return [];
      const rows = [...near.before, { item, score: near.score }, ...near.after];
      return rankRows(rows, near.position - near.before.length, near.aboveFirst);
    }
    const own = await this.ask(read, board.shardOf(item), { mode: 'count', item });
    if (own.score <= 0) return [];
    return this.aroundOverShards(read, { item, score: own.score }, radius);
  }

  /** The pivot's neighbours on every shard, merged: up to `radius` rows each side, ranked board-wide. */
  private async aroundOverShards(read: SpanRead, pivot: ScoredItem, radius: number): Promise<ListedItem[]> {
    const { board } = read;
    const question: SpanQuestion = { mode: 'near', item: pivot.item, score: pivot.score, radius };
    const replies = await Promise.all(board.shards.map((shard) => this.ask(read, shard, question)));
    const position = replies.reduce((sum, reply) => sum + reply.position, 0);
    const before = mergeListings(replies.map((reply) => reply.before)).slice(-radius);
    const after = mergeListings(replies.map((reply) => reply.after)).slice(0, radius);
    const rows = [...before, pivot, ...after];
    return rankRows(rows, position - before.length, await this.higherThan(read, pivot, rows[0].score, replies));
  }

  /** How many items of the board score above `score`: the replies counted it already when it is the pivot's. */
  private async higherThan(
    read: SpanRead,
    pivot: ScoredItem,
    score: number,
    replies: Array<{ above: number }>,
  ): Promise<number> {
    const counted =
      score === pivot.score
        ? replies
        : await Promise.all(
            read.board.shards.map((shard) => this.ask(read, shard, { mode: 'count', item: pivot.item, score })),
          );
    return counted.reduce((sum, count) => sum + count.above, 0);
  }

  /** One question to one shard; a span holding more fields than one read sums is a 422 naming what to declare. */
  private async ask<Q extends SpanQuestion>(read: SpanRead, shard: ShardKeys, question: Q): Promise<Answer<Q['mode']>> {
    const { board, window, nowMs, spanSec } = read;
    const reply = await guard(
      this.redis.callFunction(S.readSpan, {
        board,
        shard,
        nowMs,
        budgetFields: this.budgetFields,
        window,
        spanSec,
        mostFields: SPAN_MAX_FIELDS,
        question,
      }),
    );
    if (reply.costly)
      throw new SpanTooCostlyError(
        M.spanTooCostly(board.config.name, window.name, spanSec, reply.fields, SPAN_MAX_FIELDS),
      );
    return answerOf<Q['mode']>(question.mode, reply);
  }
}
