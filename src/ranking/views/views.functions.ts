import { functionSet } from '../../redis/function-library';
import { NamedArgs } from '../../redis/function-args';
import { namedFunction } from '../../redis/named-function';
import { NamedReply, Reply, ScriptReplyError } from '../../redis/replies';
import type { ViewRow } from '../core/ranking.types';
import { BoardCall, boardHeader } from '../core/script-call';
import type { ViewConfig, ViewMode } from '../options/views/trending-math';
import type { BoardKeys } from '../core/ranking.keys';
import type { WindowConfig } from '../core/window-math';
import { sliceFunctions } from '../core/slice-functions';

const VIEW_ARGS = [
  'segment',
  'view',
  'op',
  'offset',
  'limit',
  'item',
  'radius',
  'rank_score',
  'want',
  'min_actors',
  'per_group',
  'seen',
  'exclude_items',
  'exclude_groups',
] as const;

/** What a view read asks for (read_view.lua): a page, one item, an item's neighbours, or a count above a rank score. */
export type ViewRead =
  | { op: 'top'; offset: number; limit: number }
  | { op: 'item'; item: string }
  | { op: 'around'; item: string; radius: number }
  | { op: 'count'; rankScore: number }
  | ({ op: 'filter'; start: number; scan: number; want: number } & ViewFilters);

/** A view filter scan's filters, as group_page takes them (0: no floor, no cap; `seen`: rows of each group listed ahead). */
export interface ViewFilters {
  minActors: number;
  perGroup: number;
  seen: Record<string, number>;
  excludeItems: readonly string[];
  excludeGroups: readonly string[];
}

/**
 * A read of one view of one shard: the windows it reads (its window first, then a rising view's baseline);
 * the shard's keys name a segment when the view is read as that segment's.
 */
export interface ViewCall extends BoardCall {
  view: ViewConfig;
  windows: WindowConfig[];
  /** The keys each window is read from (a wilson or controversial view: each metric's); absent: the shard's. */
  sourceKeys?: BoardKeys[];
  read: ViewRead;
}

/**
 * What read_view answers, named by the read: a page (`firstPosition` of its first row, -1 for an
 * around read of an item not listed, and `higherThanFirst`), an item (its `rank` on the shard, 0 when
 * not listed, and the shard's `listed` items), or a count (`above` a rank score, and `listed`). Each
 * read fills the two fields it has; read_view sends them as its third and fourth entries.
 */
export interface ViewReply {
  draining: boolean;
  landmarkSec: number;
  rows: ViewRow[];
  firstPosition: number;
  higherThanFirst: number;
  rank: number;
  above: number;
  listed: number;
  /** filter: the place after the last row scanned, whether the listing ended there, the scanned rows' scores that did not pass, the last row scanned. */
  next: number;
  ended: boolean;
  skipped: number[];
  last?: { item: string; score: number };
  /** filter: the group of each row ("": none). */
  groups: string[];
}

/** The reply's two figures under the names of the read that asked. */
function figuresOf(read: ViewRead, first: number, second: number) {
  const none = { firstPosition: -1, higherThanFirst: 0, rank: 0, above: 0, listed: 0, next: 0, ended: false };
  if (read.op === 'top' || read.op === 'around') return { ...none, firstPosition: first, higherThanFirst: second };
  if (read.op === 'filter') return { ...none, next: first, ended: second === 1 };
  if (read.op === 'item') return { ...none, rank: first, listed: second };
  return { ...none, above: first, listed: second };
}

/** The read's own arguments by name (the others of VIEW_ARGS go as ""). */
function readArgsOf(read: ViewRead): Partial<NamedArgs<typeof VIEW_ARGS>> {
  if (read.op === 'top') return { op: read.op, offset: read.offset, limit: read.limit };
  if (read.op === 'item') return { op: read.op, item: read.item };
  if (read.op === 'around') return { op: read.op, item: read.item, radius: read.radius };
  if (read.op === 'filter')
    return {
      op: read.op,
      offset: read.start,
      limit: read.scan,
      want: read.want,
      min_actors: read.minActors,
      per_group: read.perGroup,
      seen: JSON.stringify(read.seen),
      exclude_items: JSON.stringify(read.excludeItems),
      exclude_groups: JSON.stringify(read.excludeGroups),
    };
  return { op: read.op, rank_score: read.rankScore };
}

/** A view's row: item and rank score, then a rising view's figures or a pair view's two counts. */
const VIEW_ROW = {
  plain: ['item', 'score'],
  rising: ['item', 'score', 'observed', 'baseline', 'since', 'current_slot', 'previous_slot'],
  pair: ['item', 'score', 'counts'],
} as const;

type ViewRowField = (typeof VIEW_ROW)[keyof typeof VIEW_ROW][number];

/** The records of a view's rows, by its mode: rising, wilson or controversial (pair), else plain. */
function viewRowsOf(reply: Reply, mode: ViewMode): ViewRow[] {
  const shape = mode === 'rising' ? 'rising' : mode === 'wilson' || mode === 'controversial' ? 'pair' : 'plain';
  return reply.records<ViewRowField>(VIEW_ROW[shape]).map((record) => {
    const row: ViewRow = { item: record.string('item'), score: record.number('score') };
    if (shape === 'rising')
      row.rising = {
        observed: record.number('observed'),
        baseline: record.number('baseline'),
        sinceSec: record.number('since'),
        currentSlot: record.number('current_slot'),
        previousSlot: record.number('previous_slot'),
      };
    if (shape === 'pair') row.counts = countsOf(record);
    return row;
  });
}

/** A wilson or controversial row's counts, sent as one string "<positive> <negative>" (metric_views_lib.lua). */
function countsOf(record: NamedReply<ViewRowField>): { positive: number; negative: number } {
  const [positive, negative] = record.string('counts').split(' ').map(Number);
  if (!Number.isFinite(positive) || !Number.isFinite(negative))
    throw new ScriptReplyError(record.script, `counts: two counts, got "${record.string('counts')}"`);
  return { positive, negative };
}

/** The one view script: every read of a trending view of one shard. */
export const VIEWS_FUNCTIONS = functionSet('tbRank', {
  readView: namedFunction({
    flags: ['allow-oom'],
    numberOfKeys: 'dynamic',
    args: VIEW_ARGS,
    reply: ['draining', 'landmark', 'first', 'second', 'rows', 'skipped', 'last', 'last_score', 'groups'],
    build: (call: ViewCall) => {
      const { keys } = call.shard;
      const sources = call.sourceKeys ?? call.windows.map(() => keys);
      return {
        keys: [keys.cfg(), ...call.windows.flatMap((w, i) => [sources[i].slots(w.name), sources[i].top(w.name)])],
        header: boardHeader(call, call.windows),
        args: {
          segment: keys.segment ?? '',
          view: call.view.name,
          op: call.read.op,
          offset: undefined,
          limit: undefined,
          item: undefined,
          radius: undefined,
          rank_score: undefined,
          want: undefined,
          min_actors: undefined,
          per_group: undefined,
          seen: undefined,
          exclude_items: undefined,
          exclude_groups: undefined,
          ...readArgsOf(call.read),
        },
      };
    },
    decode: (reply, call): ViewReply => {
      const lastItem = reply.string('last');
      return {
        draining: reply.flag('draining'),
        landmarkSec: reply.int('landmark'),
        rows: viewRowsOf(reply.nested('rows'), call.view.mode),
        ...figuresOf(call.read, reply.int('first'), reply.int('second')),
        skipped: reply.nested('skipped').numbers(),
        groups: reply.nested('groups').strings(),
        ...(lastItem === '' ? {} : { last: { item: lastItem, score: reply.number('last_score') } }),
      };
    },
  }),
});

/** The views slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ViewsFunctions extends sliceFunctions(VIEWS_FUNCTIONS) {}
