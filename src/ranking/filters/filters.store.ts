import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { PreparedBoard, readPerShard, ShardKeys } from '../core/board';
import { SpanReadsBusyError, SpanTooCostlyError } from '../../common/errors';
import { guard } from '../core/ranking.errors';
import { SPAN_STAGE_FIELDS_PER_CALL, SPAN_STAGE_TTL_MS, SPAN_STAGED_READS_PER_SHARD } from '../core/ranking.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import { boardCall } from '../core/script-call';
import { spanFieldsPerShard } from '../core/span-read';
import type { WindowConfig } from '../core/window-math';
import { FiltersFunctions, GroupPageCall, GroupPageReply, SpanStageCall } from './filters.functions';
import { sliceStore } from '../core/slice-store';

/** One shard's scan call as the service asks it (the board, window and time added here). */
export type ScanAsk = Omit<GroupPageCall, keyof ReturnType<typeof boardCall> | 'window'>;

/** A read of one window of a board at one time. */
export interface WindowAt {
  board: PreparedBoard;
  window: WindowConfig;
  nowMs: number;
}

/** A span a filtered read stages: its seconds, whether actor counts come with it, told each round of calls. */
export interface SpanStageAsk {
  spanSec: number;
  minActors: number;
  admit?: (calls: number) => void;
}

/**
 * A scan that found its staged span gone, the read having outlived SPAN_STAGE_TTL_MS (an instance or
 * Redis stalled that long): a 503 the client retries, as when the window holds its most such reads.
 */
function lapsedOf(error: unknown, read: WindowAt): SpanReadsBusyError | undefined {
  const lapsed = error instanceof Error && error.message.startsWith('TB_SPAN_NOT_STAGED');
  return lapsed ? new SpanReadsBusyError(M.spanStagingLapsed(read.board.config.name, read.window.name)) : undefined;
}

/** The groups option's reads: a shard's filtered page, the staged span it may scan, and the groups of listed items. */
@Injectable()
export class FiltersStore extends sliceStore(FiltersFunctions) {
  /** One group_page call on `shard`. */
  scan(read: WindowAt, shard: ShardKeys, ask: ScanAsk): Promise<GroupPageReply> {
    this.admit();
    const call = { ...boardCall(read.board, shard, read.nowMs, this.budgetFields), window: read.window, ...ask };
    return guard(this.functions.call(this.fns.groupPage, call));
  }

  /**
   * `use` run with the span staged on every shard under a token of its own (span_stage.lua), which it
   * passes to scan; what the token holds is dropped after, whatever `use` did. A span holding more fields
   * than a shard may sum (with minActors its actor contributions counted among them) is a 422 (as
   * top?span), one more staged read than a shard's window holds a 503 SPAN_READS_BUSY.
   */
  async withStagedSpan<T>(read: WindowAt, ask: SpanStageAsk, use: (token: string) => Promise<T>): Promise<T> {
    const token = randomBytes(9).toString('base64url');
    const staged = { token, ...ask };
    const shards = read.board.shards;
    try {
      for (let round = 0, open = [...shards]; open.length > 0; round++) {
        if (round > 0) ask.admit?.(open.length);
        this.admit();
        const done = await Promise.all(open.map((shard) => this.stageStep(read, shard, staged)));
        open = open.filter((_, i) => !done[i]);
      }
      return await use(token).catch((error: unknown) => {
        throw lapsedOf(error, read) ?? error;
      });
    } finally {
      // A drop refused (Redis away, the board changed or gone) leaves the keys to lapse after
      // SPAN_STAGE_TTL_MS: the read's own answer or error stands.
      await Promise.all(shards.map((shard) => this.stageCall(read, shard, staged, true))).catch(() => undefined);
    }
  }

  /** One staging call of `shard`: whether its span is staged (refusals thrown). */
  private async stageStep(
    read: WindowAt,
    shard: ShardKeys,
    staged: SpanStageAsk & { token: string },
  ): Promise<boolean> {
    const reply = await this.stageCall(read, shard, staged, false);
    if (reply.busy) throw new SpanReadsBusyError(M.spanReadsBusy(read.board.config.name, read.window.name));
    if (!reply.summed) {
      const figures = { fields: reply.fields, shards: read.board.shards.length, actors: staged.minActors > 0 };
      throw new SpanTooCostlyError(M.spanTooCostly(read.board.config.name, read.window.name, staged.spanSec, figures));
    }
    return reply.done;
  }

  private stageCall(read: WindowAt, shard: ShardKeys, staged: SpanStageAsk & { token: string }, drop: boolean) {
    const call: SpanStageCall = {
      ...boardCall(read.board, shard, read.nowMs, this.budgetFields),
      window: read.window,
      spanSec: staged.spanSec,
      mostFields: spanFieldsPerShard(read.board),
      token: staged.token,
      minActors: staged.minActors,
      stepFields: SPAN_STAGE_FIELDS_PER_CALL,
      ttlMs: SPAN_STAGE_TTL_MS,
      mostReads: SPAN_STAGED_READS_PER_SHARD,
      drop,
    };
    return guard(this.functions.call(this.fns.spanStage, call));
  }

  /** The groups of `items` (items without one are absent): one call per shard holding some of them. */
  groupsOf(board: PreparedBoard, items: string[]): Promise<Map<string, string>> {
    return readPerShard(board, items, (shard, ids) => this.functions.call(this.fns.groupsRead, { shard, items: ids }));
  }
}
