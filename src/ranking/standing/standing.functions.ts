import { functionSet } from '../../redis/function-library';
import { namedFunction } from '../../redis/named-function';
import type { PreparedBoard, ShardKeys } from '../core/board';
import { acrossShardsCall, windowReadFunction, WindowCall } from '../core/script-call';
import type { WindowConfig } from '../core/window-math';
import { sliceFunctions } from '../core/slice-functions';

/** One shard's best rows on a `tail` board, each with the most it may have lost, and the shard's hidden mass. */
export interface TailTopReply {
  draining: boolean;
  hidden: number;
  rows: Array<{ item: string; score: number; dropped: number }>;
}

/** Where a tail read goes on from: the page its first call kept ('' begins a read) and the row of it. */
export interface TailTopAt {
  page: string;
  from: number;
}

/** One call's part of a shard's tail rows; `more`: the read goes on from `next`. */
export interface TailTopPart extends TailTopReply {
  more: boolean;
  next: TailTopAt;
}

/** One shard's part of a distribution: its listed items, their range, counts up to bounds, scores at positions. */
export interface SpreadReply {
  draining: boolean;
  listed: number;
  /** Lowest and highest listed score (null: the shard lists none). */
  min: number | null;
  max: number | null;
  counts: number[];
  /** The score at each position asked (null: past the shard's last). */
  scores: Array<number | null>;
}

/** The lowest `take` scores in [lo, hi] of each shard: one quantile's candidates (integer scores). */
export interface SpreadPick {
  lo: number;
  hi: number;
  take: number;
}

/** A distribution's counts and picks on the shards of a board one Redis node serves (at least one). */
export interface SpreadShardsCall {
  board: PreparedBoard;
  shards: ShardKeys[];
  nowMs: number;
  window: WindowConfig;
  bounds: readonly string[];
  picks: readonly SpreadPick[];
  /** Most scores the picks read in all (the call's bound). */
  entries: number;
  /** A shard holding more items is left unread, in `pending` (the call's size assumed it). */
  mostHeld: number;
}

/**
 * SpreadReply summed over the shards read; `pending` the shards not read (expired slots to drain
 * first); `picked` each pick's scores read; `cut`: `entries` may have left a pick short.
 */
export interface SpreadShardsReply extends Omit<SpreadReply, 'draining' | 'scores'> {
  pending: ShardKeys[];
  picked: number[][];
  cut: boolean;
  /** The most items a shard read holds. */
  most: number;
}

/** A tail page's rows (tail_top.lua): item, score, what its slots dropped of it. */
const TAIL_ROW = ['item', 'score', 'dropped'] as const;

/** A number as Redis wrote it ("" for none). */
const scoreOf = (text: string): number | null => (text === '' ? null : Number(text));

/** What a shard answers about scores that no item need hold: a record's place, the window's distribution. */
export const STANDING_FUNCTIONS = functionSet('tbRank', {
  scoreRank: windowReadFunction({
    args: ['score', 'level', 'mark'],
    reply: ['draining', 'counted', 'ahead', 'listed'],
    values: (call: WindowCall & { score: number; equalAhead: boolean; mark?: string }) => ({
      score: String(call.score),
      level: call.equalAhead ? 1 : 0,
      mark: call.mark ?? '',
    }),
    decode: (reply) => ({
      draining: reply.flag('draining'),
      counted: reply.flag('counted'),
      ahead: reply.int('ahead'),
      listed: reply.int('listed'),
    }),
  }),

  scoreSpread: windowReadFunction({
    args: ['bounds', 'positions'],
    reply: ['draining', 'listed', 'min', 'max', 'counts', 'scores'],
    values: (call: WindowCall & { bounds: readonly string[]; positions: readonly number[] }) => ({
      bounds: call.bounds.join(' '),
      positions: call.positions.join(' '),
    }),
    decode: (reply, call): SpreadReply => {
      const counts = reply.nested('counts').expectLength(call.bounds.length);
      const scores = reply.nested('scores').expectLength(call.positions.length);
      return {
        draining: reply.flag('draining'),
        listed: reply.int('listed'),
        min: scoreOf(reply.string('min')),
        max: scoreOf(reply.string('max')),
        counts: call.bounds.map((_, i) => counts.int(i)),
        scores: call.positions.map((_, i) => scoreOf(scores.string(i))),
      };
    },
  }),

  scoreSpreadShards: namedFunction({
    flags: ['no-writes', 'allow-cross-slot-keys'],
    numberOfKeys: 1,
    args: ['window_key', 'shards', 'bounds', 'picks', 'entries', 'most_held'],
    reply: ['pending', 'listed', 'min', 'max', 'counts', 'picked', 'cut', 'most'],
    build: (call: SpreadShardsCall) =>
      acrossShardsCall(call, {
        bounds: call.bounds.join(' '),
        picks: call.picks.map((pick) => `${pick.lo} ${pick.hi} ${pick.take}`).join(' '),
        entries: call.entries,
        most_held: call.mostHeld,
      }),
    decode: (reply, call): SpreadShardsReply => {
      const counts = reply.nested('counts').expectLength(call.bounds.length);
      const picked = reply.nested('picked').expectLength(call.picks.length);
      return {
        pending: reply
          .nested('pending')
          .intsFrom(0)
          .map((position) => call.shards[position - 1]),
        listed: reply.int('listed'),
        min: scoreOf(reply.string('min')),
        max: scoreOf(reply.string('max')),
        counts: call.bounds.map((_, i) => counts.int(i)),
        picked: call.picks.map((_, i) => picked.nested(i).numbers()),
        cut: reply.flag('cut'),
        most: reply.int('most'),
      };
    },
  }),

  tailTop: windowReadFunction({
    args: ['limit', 'looks', 'from', 'page'],
    reply: ['draining', 'hidden', 'more', 'page', 'next', 'rows'],
    values: (call: WindowCall & { limit: number; looks: number; at: TailTopAt }) => ({
      limit: call.limit,
      looks: call.looks,
      from: call.at.from,
      page: call.at.page,
    }),
    decode: (reply): TailTopPart => {
      const rows = reply
        .nested('rows')
        .records(TAIL_ROW)
        .map((row) => ({ item: row.string('item'), score: row.number('score'), dropped: row.int('dropped') }));
      return {
        draining: reply.flag('draining'),
        hidden: reply.int('hidden'),
        more: reply.flag('more'),
        next: { page: reply.string('page'), from: reply.int('next') },
        rows,
      };
    },
  }),
});

/** The standing slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class StandingFunctions extends sliceFunctions(STANDING_FUNCTIONS) {}
