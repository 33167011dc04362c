import { join } from 'node:path';
import { Reply } from '../../redis/replies';
import { typedFunction } from '../../redis/function-library';
import type { ScoredItem } from '../core/ranking.types';
import { rowsOf, WindowCall, windowRead } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';

/** A span read of one shard: the window, the span's length and the most slot fields it may sum. */
export interface SpanCall extends WindowCall {
  spanSec: number;
  mostFields: number;
}

/** What the span's three questions ask of one shard. */
export type SpanQuestion =
  | { mode: 'head'; offset: number; count: number }
  | { mode: 'count'; item: string; score?: number }
  | { mode: 'near'; item: string; score?: number; radius: number };

/** Every span answer starts with how many items the shard lists in the span; `costly` when it holds too many fields to sum. */
export type SpanReply =
  { costly: true; fields: number } | ({ costly: false; fields: number; listed: number } & SpanFigures);

export type SpanFigures =
  | { mode: 'head'; higherThanFirst: number; rows: ScoredItem[] }
  | { mode: 'count'; score: number; above: number }
  | {
      mode: 'near';
      score: number;
      position: number;
      above: number;
      aboveFirst: number;
      before: ScoredItem[];
      after: ScoredItem[];
    };

function questionArgs(question: SpanQuestion): Array<string | number> {
  switch (question.mode) {
    case 'head':
      return ['head', question.offset, question.count];
    case 'count':
      return ['count', question.item, question.score ?? ''];
    case 'near':
      return ['near', question.item, question.score ?? '', question.radius];
  }
}

function figuresOf(reply: Reply, question: SpanQuestion): SpanFigures {
  switch (question.mode) {
    case 'head':
      return { mode: 'head', higherThanFirst: reply.int(3), rows: rowsOf(reply, 4) };
    case 'count':
      reply.expectLength(5);
      return { mode: 'count', score: reply.number(3), above: reply.int(4) };
    case 'near': {
      const rows = rowsOf(reply, 8);
      const beforeCount = reply.int(7);
      return {
        mode: 'near',
        score: reply.number(3),
        position: reply.int(4),
        above: reply.int(5),
        aboveFirst: reply.int(6),
        before: rows.slice(0, beforeCount),
        after: rows.slice(beforeCount),
      };
    }
  }
}

/** The span reads' own shared module (beside the ranking's others, in core/lua). */
export const SPAN_MODULE = join(__dirname, '..', 'core', 'lua', 'span_lib.lua');

/** Reads of a window's newest slots (`?span=`), summed from the slot hashes of one shard. */
export const SPANS_FUNCTIONS = {
  readSpan: typedFunction({
    name: 'tbRankReadSpan',
    handler: 'read_span',
    // Sums slots and expires nothing: a read of any node, replicas included (FCALL_RO).
    flags: ['no-writes'],
    numberOfKeys: 3,
    build: (call: SpanCall & { question: SpanQuestion }) =>
      windowRead(call, [call.spanSec, call.mostFields, ...questionArgs(call.question)]),
    decode: (raw, call): SpanReply => {
      const reply = new Reply('tbRankReadSpan', raw).expectLength(2, true);
      if (!reply.flag(0)) return { costly: true, fields: reply.int(1) };
      reply.expectLength(4, true);
      return { costly: false, fields: reply.int(1), listed: reply.int(2), ...figuresOf(reply, call.question) };
    },
  }),
};

/** The spans slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class SpansFunctions extends sliceFunctions(SPANS_FUNCTIONS) {}
