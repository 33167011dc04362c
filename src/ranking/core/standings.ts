import type { Idempotent } from '../../redis/idempotency';
import { ScriptReplyError } from '../../redis/replies';
import type { NamedReply, Reply } from '../../redis/replies';
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

/**
 * A write's named standings fields (board_write_lib's standing_fields), after its own leading fields:
 * each a list over the board's windows (NamedReply.ints), marks 0 when the board keeps none.
 */
export const STANDING_FIELDS = ['scores', 'ranks', 'previous_ranks', 'marks'] as const;

type StandingField = (typeof STANDING_FIELDS)[number];

/** The fields a write's answer leads with, before its standings: draining first, and a like's `counted`. */
type LeadField = 'draining' | 'counted';

/**
 * A write's answer (after idem_lib's outcome, context and counts) with its standings: `lead` its own
 * fields (draining first), read by `rest` by name, then STANDING_FIELDS. An answer stored by a library
 * from before the named contract replays in its positional layout (the lead fields, then
 * score_1, rank_1, ..., previous ranks, marks: standingsOf), told apart by its length, and for several
 * windows by its first score being a number where the named answer joins them in a string.
 */
export function withNamedStandings<T, Made extends string>(
  decoded: Idempotent<Reply, Made>,
  lead: readonly LeadField[],
  rest: (reply: NamedReply<LeadField | StandingField>) => T,
): Idempotent<T & StandingsReply, Made> {
  const reply = decoded.value;
  const windowCount = decoded.context.split(',').length;
  const fields = [...lead, ...STANDING_FIELDS];
  const named = reply.length === fields.length && (windowCount === 1 || reply.isString(lead.length));
  if (!named) {
    const legacy = reply.range(0, lead.length).named<LeadField | StandingField>(lead);
    return {
      ...decoded,
      value: {
        ...rest(legacy),
        draining: legacy.flag('draining'),
        standings: standingsOf(reply, lead.length, windowCount),
        marks: marksOf(reply, lead.length, windowCount),
      },
    };
  }
  const answer = reply.named<LeadField | StandingField>(fields);
  return {
    ...decoded,
    value: { ...rest(answer), draining: answer.flag('draining'), ...namedStandings(answer, windowCount) },
  };
}

/** The standings of a named answer over `windowCount` windows. */
function namedStandings(
  answer: NamedReply<LeadField | StandingField>,
  windowCount: number,
): Omit<StandingsReply, 'draining'> {
  const scores = answer.ints('scores');
  const ranks = answer.ints('ranks');
  const previous = answer.ints('previous_ranks');
  if (scores.length !== windowCount || ranks.length !== windowCount || previous.length !== windowCount) {
    throw new ScriptReplyError(answer.script, `expected ${windowCount} windows' scores, ranks and previous ranks`);
  }
  const marks = answer.isString('marks') ? answer.string('marks').split(',') : undefined;
  if (marks === undefined && answer.int('marks') !== 0) throw new ScriptReplyError(answer.script, 'marks: 0 or a list');
  if (marks !== undefined && marks.length !== windowCount)
    throw new ScriptReplyError(answer.script, 'marks: one per window');
  return {
    standings: scores.map((score, w) => ({ score, rank: ranks[w] || null, previousRank: previous[w] || null })),
    marks,
  };
}
