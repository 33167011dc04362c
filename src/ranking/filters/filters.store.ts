import { Injectable } from '@nestjs/common';
import { RedisService } from '../../redis/redis.service';
import { RedisFunctions } from '../../redis/redis-functions';
import { PreparedBoard, ShardKeys } from '../core/board';
import { guard } from '../core/ranking.errors';
import { RankingSettings } from '../core/ranking.settings';
import { boardCall } from '../core/script-call';
import type { WindowConfig } from '../core/window-math';
import { FiltersFunctions, GroupPageCall, GroupPageReply } from './filters.functions';

/** One shard's scan call as the service asks it (the board, window and time added here). */
export type ScanAsk = Omit<GroupPageCall, keyof ReturnType<typeof boardCall> | 'window'>;

/** The groups option's reads: a shard's filtered page, and the groups of listed items. */
@Injectable()
export class FiltersStore {
  private readonly budgetFields: number;
  private readonly fns: FiltersFunctions['functions'];
  private readonly admit: () => void;

  constructor(
    redis: RedisService,
    private readonly functions: RedisFunctions,
    part: FiltersFunctions,
    settings: RankingSettings,
  ) {
    this.budgetFields = settings.expireChunk;
    this.fns = part.functions;
    functions.define([part.library]);
    this.admit = () => redis.admit();
  }

  /** One group_page call on `shard`. */
  scan(
    read: { board: PreparedBoard; window: WindowConfig; nowMs: number },
    shard: ShardKeys,
    ask: ScanAsk,
  ): Promise<GroupPageReply> {
    this.admit();
    const call = { ...boardCall(read.board, shard, read.nowMs, this.budgetFields), window: read.window, ...ask };
    return guard(this.functions.call(this.fns.groupPage, call));
  }

  /** The groups of `items` (items without one are absent): one call per shard holding some of them. */
  async groupsOf(board: PreparedBoard, items: string[]): Promise<Map<string, string>> {
    const byShard = new Map<ShardKeys, string[]>();
    for (const item of new Set(items)) {
      const shard = board.shardOf(item);
      byShard.set(shard, [...(byShard.get(shard) ?? []), item]);
    }
    const found = new Map<string, string>();
    await Promise.all(
      [...byShard].map(async ([shard, ids]) => {
        const groups = await this.functions.call(this.fns.groupsRead, { shard, items: ids });
        ids.forEach((item, i) => {
          const group = groups[i];
          if (group !== null) found.set(item, group);
        });
      }),
    );
    return found;
  }
}
