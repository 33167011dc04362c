import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../common/config';
import { RedisService } from '../../redis/redis.service';
import { PreparedBoard } from '../core/board';
import { guard } from '../core/ranking.errors';
import type { ScoredItem } from '../core/ranking.types';
import { boardCall } from '../core/script-call';
import { mergeListings } from '../core/shard-math';
import type { WindowConfig } from '../core/window-math';
import type { StoredSnapshot } from '../history/history.functions';
import { RANKING } from '../ranking.functions';

const S = RANKING.functions;

/** Calendar windows' archives as stored, merged over a sharded board's shards. */
@Injectable()
export class ArchivesStore {
  private readonly budgetFields: number;

  constructor(
    private readonly redis: RedisService,
    config: AppConfig,
  ) {
    this.budgetFields = config.EXPIRE_CHUNK;
    redis.defineFunctions([RANKING.library]);
  }

  /**
   * Up to `most` archives of periods starting at or before `latestSec` (undefined: the newest), newest
   * first. Each shard keeps its own top rows of a period, so the board's top rows are among their
   * union; a shard's newest `most` periods hold every one of the board's newest `most` it has.
   */
  async archives(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    latestSec: number | undefined,
    most: number,
  ): Promise<{ keeps: boolean; archives: StoredSnapshot[] }> {
    const replies = await Promise.all(
      board.shards.map((shard) =>
        guard(
          this.redis.callFunction(S.archiveRead, {
            ...boardCall(board, shard, nowMs, this.budgetFields),
            window,
            latestSec,
            most,
          }),
        ),
      ),
    );
    if (!replies.some((reply) => reply.keeps)) return { keeps: false, archives: [] };
    const byStart = new Map<number, ScoredItem[][]>();
    for (const { archives } of replies) {
      for (const archive of archives) byStart.set(archive.atSec, [...(byStart.get(archive.atSec) ?? []), archive.rows]);
    }
    const starts = [...byStart.keys()].sort((a, b) => b - a).slice(0, most);
    const top = window.snapshots?.top;
    return {
      keeps: true,
      archives: starts.map((atSec) => ({ atSec, rows: mergeListings(byStart.get(atSec) ?? []).slice(0, top) })),
    };
  }
}
