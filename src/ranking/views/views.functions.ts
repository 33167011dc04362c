import { Reply } from '../../redis/replies';
import { typedFunction } from '../../redis/function-library';
import { windowArgsOf } from '../core/board';
import type { ViewRow } from '../core/ranking.types';
import { BoardCall, boardArgs } from '../core/script-call';
import type { ViewConfig } from '../core/trending-math';
import type { WindowConfig } from '../core/window-math';
import { sliceFunctions } from '../core/slice-functions';

/** What a view read asks for (read_view.lua): a page, one item, an item's neighbours, or a count above a rank score. */
export type ViewRead =
  | { op: 'top'; offset: number; limit: number }
  | { op: 'item'; item: string }
  | { op: 'around'; item: string; radius: number }
  | { op: 'count'; rankScore: number };

/**
 * A read of one view of one shard: the windows it reads (its window first, then a rising view's baseline);
 * the shard's keys name a segment when the view is read as that segment's.
 */
export interface ViewCall extends BoardCall {
  view: ViewConfig;
  windows: WindowConfig[];
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
}

/** The reply's two figures under the names of the read that asked. */
function figuresOf(read: ViewRead, first: number, second: number) {
  const none = { firstPosition: -1, higherThanFirst: 0, rank: 0, above: 0, listed: 0 };
  if (read.op === 'top' || read.op === 'around') return { ...none, firstPosition: first, higherThanFirst: second };
  if (read.op === 'item') return { ...none, rank: first, listed: second };
  return { ...none, above: first, listed: second };
}

function readArgsOf(read: ViewRead): Array<string | number> {
  if (read.op === 'top') return [read.offset, read.limit];
  if (read.op === 'item') return [read.item];
  if (read.op === 'around') return [read.item, read.radius];
  return [read.rankScore];
}

/** Rows of 2 entries (item, rank score), or 7 for a rising view (its figures follow), from entry 4 on. */
function viewRowsOf(reply: Reply, rising: boolean): ViewRow[] {
  const width = rising ? 7 : 2;
  if ((reply.length - 4) % width !== 0) throw reply.unexpected(reply.length - 1, `rows of ${width} entries`);
  const rows: ViewRow[] = [];
  for (let i = 4; i < reply.length; i += width) {
    const row: ViewRow = { item: reply.string(i), score: reply.number(i + 1) };
    if (rising)
      row.rising = {
        observed: reply.number(i + 2),
        baseline: reply.number(i + 3),
        sinceSec: reply.number(i + 4),
        currentSlot: reply.number(i + 5),
        previousSlot: reply.number(i + 6),
      };
    rows.push(row);
  }
  return rows;
}

/** The one view script: every read of a trending view of one shard. */
export const VIEWS_FUNCTIONS = {
  readView: typedFunction({
    name: 'tbRankReadView',
    handler: 'read_view',
    flags: ['allow-oom'],
    numberOfKeys: 'dynamic',
    build: (call: ViewCall) => {
      const { keys } = call.shard;
      return {
        keys: [keys.cfg(), ...call.windows.flatMap((w) => [keys.slots(w.name), keys.top(w.name)])],
        args: [
          ...boardArgs(call, windowArgsOf(call.windows, call.nowMs)),
          keys.segment ?? '',
          call.view.name,
          call.read.op,
          ...readArgsOf(call.read),
        ],
      };
    },
    decode: (raw, call): ViewReply => {
      const reply = new Reply('tbRankReadView', raw).expectLength(4, true);
      const rows = viewRowsOf(reply, call.view.mode === 'rising');
      return {
        draining: reply.flag(0),
        landmarkSec: reply.int(1),
        rows,
        ...figuresOf(call.read, reply.int(2), reply.int(3)),
      };
    },
  }),
};

/** The views slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ViewsFunctions extends sliceFunctions(VIEWS_FUNCTIONS) {}
