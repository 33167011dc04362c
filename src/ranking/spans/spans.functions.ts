import { functionSet, typedFunction } from '../../redis/function-library';
import { join } from 'node:path';
import type { NamedArgs } from '../../redis/function-args';
import { NamedReply } from '../../redis/replies';
import type { ScoredItem } from '../core/ranking.types';
import { namedWindowRead, rowsOf, WindowCall } from '../core/script-call';
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
  /** hidden: the item holds a score above 0 that moderation leaves out of the listing. */
  | { mode: 'count'; score: number; hidden: boolean; above: number }
  | {
      mode: 'near';
      score: number;
      position: number;
      above: number;
      aboveFirst: number;
      before: ScoredItem[];
      after: ScoredItem[];
    };

const SPAN_ARGS = ['span_sec', 'most_fields', 'mode', 'item', 'score', 'offset', 'count', 'radius'] as const;
const SPAN_REPLY = [
  'summed',
  'fields',
  'listed',
  'higher_than_first',
  'score',
  'hidden',
  'position',
  'above',
  'above_first',
  'before',
  'rows',
] as const;

type SpanReplyFields = NamedReply<(typeof SPAN_REPLY)[number]>;

/** The question's own arguments (the mode's; the others are sent empty). */
function questionArgs(question: SpanQuestion): Omit<NamedArgs<typeof SPAN_ARGS>, 'span_sec' | 'most_fields'> {
  switch (question.mode) {
    case 'head':
      return { mode: 'head', item: '', score: '', offset: question.offset, count: question.count, radius: '' };
    case 'count':
      return { mode: 'count', item: question.item, score: question.score, offset: '', count: '', radius: '' };
    case 'near':
      return {
        mode: 'near',
        item: question.item,
        score: question.score,
        offset: '',
        count: '',
        radius: question.radius,
      };
  }
}

function figuresOf(reply: SpanReplyFields, question: SpanQuestion): SpanFigures {
  switch (question.mode) {
    case 'head':
      return { mode: 'head', higherThanFirst: reply.int('higher_than_first'), rows: rowsOf(reply.nested('rows')) };
    case 'count':
      return { mode: 'count', score: reply.number('score'), hidden: reply.flag('hidden'), above: reply.int('above') };
    case 'near': {
      const rows = rowsOf(reply.nested('rows'));
      const beforeCount = reply.int('before');
      return {
        mode: 'near',
        score: reply.number('score'),
        position: reply.int('position'),
        above: reply.int('above'),
        aboveFirst: reply.int('above_first'),
        before: rows.slice(0, beforeCount),
        after: rows.slice(beforeCount),
      };
    }
  }
}

/** The span reads' own shared module (beside the ranking's others, in core/lua). */
export const SPAN_MODULE = join(__dirname, '..', 'core', 'lua', 'span_lib.lua');

/** Reads of a window's newest slots (`?span=`), summed from the slot hashes of one shard. */
export const SPANS_FUNCTIONS = functionSet('tbRank', {
  readSpan: typedFunction({
    // Sums slots and expires nothing: a read of any node, replicas included (FCALL_RO).
    flags: ['no-writes'],
    numberOfKeys: 3,
    contract: { args: SPAN_ARGS, reply: SPAN_REPLY },
    build: (call: SpanCall & { question: SpanQuestion }) =>
      namedWindowRead(call, SPAN_ARGS, {
        span_sec: call.spanSec,
        most_fields: call.mostFields,
        ...questionArgs(call.question),
      }),
    decode: (raw, call): SpanReply => {
      const reply = new NamedReply('tbRankReadSpan', SPAN_REPLY, raw);
      if (!reply.flag('summed')) return { costly: true, fields: reply.int('fields') };
      return {
        costly: false,
        fields: reply.int('fields'),
        listed: reply.int('listed'),
        ...figuresOf(reply, call.question),
      };
    },
  }),
});

/** The spans slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class SpansFunctions extends sliceFunctions(SPANS_FUNCTIONS) {}
