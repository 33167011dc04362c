import { Injectable } from '@nestjs/common';
import { SpanTooCostlyError } from '../../common/errors';
import { ShardKeys } from '../core/board';
import { RankedPage, RankedReader, RankedSource, RankedStanding } from '../core/ranked-reader';
import { guard } from '../core/ranking.errors';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import type { ScoredItem } from '../core/ranking.types';
import { SpanRead, spanFieldsPerShard } from '../core/span-read';
import { SpanFigures, SpanQuestion, SpansFunctions } from './spans.functions';
import { sliceStore } from '../core/slice-store';

type Answer<Mode extends SpanFigures['mode']> = Extract<SpanFigures, { mode: Mode }> & { listed: number };

/** The reply to a question of `mode`: decode answers the question asked, so another mode is a bug. */
function answerOf<Mode extends SpanFigures['mode']>(mode: Mode, reply: SpanFigures & { listed: number }): Answer<Mode> {
  if (reply.mode !== mode) throw new Error(`read_span answered ${reply.mode} to a ${mode} question`);
  return reply as Answer<Mode>;
}

/**
 * Span reads: a span is a ranked source (read_span, one call per shard and question) that the reader
 * turns into pages, standings and neighbours on one shard or many, as windows and views are. Nothing is expired or drained:
 * a span's slots all lie inside the window's period, and each read sums them afresh.
 */
@Injectable()
export class SpansStore extends sliceStore(SpansFunctions) {
  private readonly reader = new RankedReader(this.admit);

  top(read: SpanRead, offset: number, limit: number): Promise<RankedPage<ScoredItem>> {
    return this.reader.top(read.board, this.sourceOf(read), offset, limit);
  }

  item(read: SpanRead, item: string): Promise<RankedStanding<ScoredItem>> {
    return this.reader.item(read.board, this.sourceOf(read), item);
  }

  around(read: SpanRead, item: string, radius: number): Promise<RankedPage<ScoredItem>> {
    return this.reader.around(read.board, this.sourceOf(read), item, radius);
  }

  private sourceOf(read: SpanRead): RankedSource<ScoredItem> {
    const ask = <Q extends SpanQuestion>(shard: ShardKeys, question: Q) => this.ask(read, shard, question);
    return {
      head: async (shard, offset, count) => {
        const head = await ask(shard, { mode: 'head', offset, count });
        return { draining: false, rows: head.rows, higherThanFirst: head.higherThanFirst };
      },
      standing: async (shard, item) => {
        const own = await ask(shard, { mode: 'count', item });
        // A score moderation leaves out (hidden) is answered without a row: unranked, as a window's.
        const row = own.score > 0 && !own.hidden ? { item, score: own.score } : undefined;
        return { draining: false, row, score: own.score, above: own.above, listed: own.listed };
      },
      countAbove: async (shards, score) => {
        const counts = await Promise.all(shards.map((shard) => ask(shard, { mode: 'count', item: '', score })));
        const sum = (pick: (count: Answer<'count'>) => number) =>
          counts.reduce((total, count) => total + pick(count), 0);
        return { draining: false, above: sum((count) => count.above), listed: sum((count) => count.listed) };
      },
      around: async (shard, item, radius) => {
        const near = await ask(shard, { mode: 'near', item, radius });
        const rows = [...near.before, { item, score: near.score }, ...near.after];
        const firstPosition = near.score > 0 ? near.position - near.before.length : -1;
        return { draining: false, rows, firstPosition, higherThanFirst: near.aboveFirst };
      },
      neighbours: async (shard, pivot, radius) => {
        const near = await ask(shard, { mode: 'near', item: pivot.item, score: pivot.score, radius });
        return { draining: false, position: near.position, above: near.above, before: near.before, after: near.after };
      },
    };
  }

  /**
   * One question to one shard; a span holding more fields than one read sums is a 422 naming what to
   * declare. The bound holds over all shards together: each sums at most its share of SPAN_MAX_FIELDS.
   */
  private async ask<Q extends SpanQuestion>(read: SpanRead, shard: ShardKeys, question: Q): Promise<Answer<Q['mode']>> {
    const { board, window, nowMs, spanSec } = read;
    const reply = await guard(
      this.functions.call(this.fns.readSpan, {
        board,
        shard,
        nowMs,
        budgetFields: this.budgetFields,
        window,
        spanSec,
        mostFields: spanFieldsPerShard(board),
        question,
      }),
    );
    if (reply.costly) {
      const figures = { fields: reply.fields, shards: board.shards.length };
      throw new SpanTooCostlyError(M.spanTooCostly(board.config.name, window.name, spanSec, figures));
    }
    return answerOf<Q['mode']>(question.mode, reply);
  }
}
