import { Injectable } from '@nestjs/common';
import { PreparedBoard, readPerShard, ShardKeys } from '../core/board';
import { SpanTooCostlyError } from '../../common/errors';
import { guard } from '../core/ranking.errors';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import { boardCall } from '../core/script-call';
import type { WindowConfig } from '../core/window-math';
import { FiltersFunctions, GroupPageCall, GroupPageReply } from './filters.functions';
import { sliceStore } from '../core/slice-store';

/** One shard's scan call as the service asks it (the board, window and time added here). */
export type ScanAsk = Omit<GroupPageCall, keyof ReturnType<typeof boardCall> | 'window'>;

/** The groups option's reads: a shard's filtered page, and the groups of listed items. */
@Injectable()
export class FiltersStore extends sliceStore(FiltersFunctions) {
  /**
   * One group_page call on `shard`; a span holding more fields than the shard may sum (with minActors its
   * actor contributions counted among them) is a 422 (as top?span).
   */
  async scan(
    read: { board: PreparedBoard; window: WindowConfig; nowMs: number },
    shard: ShardKeys,
    ask: ScanAsk,
  ): Promise<GroupPageReply> {
    this.admit();
    const call = { ...boardCall(read.board, shard, read.nowMs, this.budgetFields), window: read.window, ...ask };
    const reply = await guard(this.functions.call(this.fns.groupPage, call));
    if (!reply.summed) {
      const figures = { fields: reply.fields, shards: read.board.shards.length, actors: ask.minActors > 0 };
      throw new SpanTooCostlyError(M.spanTooCostly(read.board.config.name, read.window.name, ask.spanSec, figures));
    }
    return reply;
  }

  /** The groups of `items` (items without one are absent): one call per shard holding some of them. */
  groupsOf(board: PreparedBoard, items: string[]): Promise<Map<string, string>> {
    return readPerShard(board, items, (shard, ids) => this.functions.call(this.fns.groupsRead, { shard, items: ids }));
  }
}
