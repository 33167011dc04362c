import { functionSet } from '../../redis/function-library';
import { NamedReply } from '../../redis/replies';
import type { ScanReply, ScanRow } from '../core/filter-merge';
import { perItemRead, windowReadFunction, WindowCall } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';

const PAGE_REPLY = [
  'draining',
  'rows',
  'skipped',
  'next',
  'ended',
  'last',
  'last_score',
  'row_marks',
  'skipped_marks',
  'last_mark',
] as const;

/** What a span_stage call answers (span_stage.lua). */
const STAGE_REPLY = ['summed', 'fields', 'busy', 'done'] as const;

/** A filtered page's rows (group_page.lua): item, score, group. */
const GROUP_ROW = ['item', 'score', 'group'] as const;

/** A row of a filtered page: its group "" when it has none. */
export type GroupRow = ScanRow;

/** What one group_page call of a shard answers. */
export type GroupPageReply = ScanReply<GroupRow>;

/** One shard's filtered scan (the filters as the script takes them). */
export interface GroupPageCall extends WindowCall {
  start: number;
  scan: number;
  want: number;
  perGroup: number;
  seen: Record<string, number>;
  excludeItems: readonly string[];
  excludeGroups: readonly string[];
  /** At least this many distinct actors in the window (0: no floor; a board with actors). */
  minActors: number;
  /** Scan the span that span_stage made under this token ("": the window's own listing). */
  spanToken: string;
}

/** One call staging a span on a shard for the read named by `token` (span_stage.lua). */
export interface SpanStageCall extends WindowCall {
  spanSec: number;
  /** Most slot fields (and with minActors contributions) the span may hold on this shard (spanFieldsPerShard). */
  mostFields: number;
  token: string;
  /** Above 0: the actor counts are staged too. */
  minActors: number;
  /** Most fields one call sums (SPAN_STAGE_FIELDS_PER_CALL). */
  stepFields: number;
  ttlMs: number;
  /** Most staged reads the shard's window holds at once (SPAN_STAGED_READS_PER_SHARD). */
  mostReads: number;
  /** Remove what the token holds instead. */
  drop: boolean;
}

/** What a span_stage call answers: `summed` false when the span holds more than mostFields (`fields`). */
export interface SpanStageReply {
  summed: boolean;
  fields: number;
  busy: boolean;
  done: boolean;
}

/** The filters slice's functions (the groups option, src/ranking/options/groups/): a shard's filtered page, and the groups of listed items. */
export const FILTERS_FUNCTIONS = functionSet('tbRank', {
  groupPage: windowReadFunction({
    args: ['start', 'scan', 'want', 'per_group', 'seen', 'exclude_items', 'exclude_groups', 'min_actors', 'span_token'],
    reply: PAGE_REPLY,
    values: (call: GroupPageCall) => ({
      start: call.start,
      scan: call.scan,
      want: call.want,
      per_group: call.perGroup,
      seen: JSON.stringify(call.seen),
      exclude_items: JSON.stringify(call.excludeItems),
      exclude_groups: JSON.stringify(call.excludeGroups),
      min_actors: call.minActors,
      span_token: call.spanToken,
    }),
    decode: (reply): GroupPageReply => {
      const rows = reply
        .nested('rows')
        .records(GROUP_ROW)
        .map((row) => ({ item: row.string('item'), score: row.number('score'), group: row.string('group') }));
      const skipped = reply.nested('skipped').numbers();
      // A board keeping pairs marks every row (tiebreak_lib): the merge and the ranks compare the marks.
      const rowMarks = marksOf(reply, 'row_marks', rows.length);
      const skippedMarks = marksOf(reply, 'skipped_marks', skipped.length);
      const lastItem = reply.string('last');
      const lastMark = reply.string('last_mark');
      const last =
        lastItem === ''
          ? undefined
          : { item: lastItem, score: reply.number('last_score'), ...(lastMark === '' ? {} : { tie: lastMark }) };
      return {
        draining: reply.flag('draining'),
        rows: rowMarks ? rows.map((row, i) => ({ ...row, tie: rowMarks[i] })) : rows,
        skipped,
        ...(skippedMarks ? { skippedTies: skippedMarks } : {}),
        next: reply.int('next'),
        ended: reply.flag('ended'),
        last,
      };
    },
  }),

  spanStage: windowReadFunction({
    args: ['span_sec', 'most_fields', 'token', 'min_actors', 'step', 'ttl_ms', 'most_reads', 'drop'],
    reply: STAGE_REPLY,
    values: (call: SpanStageCall) => ({
      span_sec: call.spanSec,
      most_fields: call.mostFields,
      token: call.token,
      min_actors: call.minActors,
      step: call.stepFields,
      ttl_ms: call.ttlMs,
      most_reads: call.mostReads,
      drop: call.drop ? 1 : 0,
    }),
    decode: (reply): SpanStageReply => ({
      summed: reply.flag('summed'),
      fields: reply.int('fields'),
      busy: reply.flag('busy'),
      done: reply.flag('done'),
    }),
  }),

  groupsRead: perItemRead('groups', (groups, count) => {
    groups.expectLength(count);
    return Array.from({ length: count }, (_, i) => groups.optionalString(i));
  }),
});

/** A page reply's marks of `count` rows (undefined when it has none: a board without pairs). */
function marksOf(
  reply: NamedReply<(typeof PAGE_REPLY)[number]>,
  field: 'row_marks' | 'skipped_marks',
  count: number,
): string[] | undefined {
  const marks = reply.nested(field);
  if (marks.length === 0) return undefined;
  return marks.expectLength(count).strings();
}

/** The filters slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class FiltersFunctions extends sliceFunctions(FILTERS_FUNCTIONS) {}
