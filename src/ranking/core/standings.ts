import type { Idempotent } from '../../redis/idempotency';
import type { Reply } from '../../redis/replies';
import type { StandingsReply, WindowStanding } from './ranking.types';

/**
 * [score_1, rank_1, ..., score_W, rank_W, previous_1, ..., previous_W] from entry `first` on. A reply
 * stored before writes answered previous ranks (pairs only) replays with previousRank null.
 */
export function standingsOf(reply: Reply, first: number, windowCount: number): WindowStanding[] {
  const withPrevious = reply.length - first >= 3 * windowCount;
  if (!withPrevious) reply.expectLength(first + 2 * windowCount);
  return Array.from({ length: windowCount }, (_, w) => ({
    score: reply.int(first + 2 * w),
    rank: reply.int(first + 2 * w + 1) || null,
    previousRank: withPrevious ? reply.int(first + 2 * windowCount + w) || null : null,
  }));
}

/** [mark_1, ..., mark_W] after the previous ranks: a write on a sharded board whose order keeps marks (order_lib); else undefined. */
function marksOf(reply: Reply, first: number, windowCount: number): string[] | undefined {
  if (reply.length - first !== 4 * windowCount) return undefined;
  return Array.from({ length: windowCount }, (_, w) => reply.string(first + 3 * windowCount + w));
}

/** A write's standings (an increment's, a like's, a score's), once its context (the window names it was answered with) is known. */
export function withStandings<T>(
  decoded: Idempotent<{ reply: Reply; rest: T }>,
  first: number,
): Idempotent<T & StandingsReply> {
  const { reply, rest } = decoded.value;
  const windowCount = decoded.context.split(',').length;
  return {
    ...decoded,
    value: {
      ...rest,
      draining: reply.flag(0),
      standings: standingsOf(reply, first, windowCount),
      marks: marksOf(reply, first, windowCount),
    },
  };
}
