import { Injectable } from '@nestjs/common';
import { IdemCalls, Idempotent, IdemRequest } from '../../redis/idempotency';
import { PreparedBoard, readPerShard, type ShardKeys } from '../core/board';
import { guard } from '../core/ranking.errors';
import type { ItemData } from '../options/item-data/item-data';
import { ITEM_DATA_ROWS_PER_CALL } from '../options/item-data/item-data.limits';
import { boardCall } from '../core/script-call';
import { ItemsFunctions } from './items.functions';
import { sliceStore } from '../core/slice-store';

/** A data write: `json` the serialized object, null to remove it. */
export interface ItemDataCommand {
  board: PreparedBoard;
  nowMs: number;
  item: string;
  json: string | null;
  idem?: IdemRequest;
  /** Bytes the item's stored data may grow by (the client's itemDataBytes allowance; UNLIMITED: no quota). */
  dataBytes: number;
}

/** Item data: one hash per shard (item -> JSON), written on the item's shard, read per shard for listed rows. */
@Injectable()
export class ItemDataStore extends sliceStore(ItemsFunctions) {
  private readonly idemCalls = IdemCalls.for(this.settings.idempotencyRetentionMs, this.redis.client);

  /** Refused (TB_ITEM_NOT_HELD) when a data write names an item no window of its shard holds. */
  write(command: ItemDataCommand): Promise<Idempotent<boolean, 'data_bytes'>> {
    const { board, nowMs, item, json, idem, dataBytes } = command;
    const call = { ...boardCall(board, board.shardOf(item), nowMs, this.budgetFields), item, json, dataBytes };
    return guard(this.functions.call(this.fns.itemDataWrite, { ...call, idem: this.idemCalls.of(idem) }));
  }

  /**
   * The data of `items` (items without data are absent): calls of at most ITEM_DATA_ROWS_PER_CALL items
   * on each shard holding some of them, so no call answers more than ITEM_DATA_READ_BYTES_PER_CALL.
   * `charge` is told the calls past one per shard before any is sent (it may refuse: the read budget).
   * Each call reads its items' data as they are then: a row's data is one stored value, as it is when
   * the rows and their data are read in calls of their own.
   */
  dataOf(board: PreparedBoard, items: string[], charge?: (calls: number) => void): Promise<Map<string, ItemData>> {
    charge?.(extraDataCalls(board, items));
    return readPerShard(board, items, async (shard, ids) => {
      const parts = [];
      for (let first = 0; first < ids.length; first += ITEM_DATA_ROWS_PER_CALL) {
        const part = ids.slice(first, first + ITEM_DATA_ROWS_PER_CALL);
        parts.push(this.functions.call(this.fns.itemDataRead, { shard, items: part }));
      }
      return (await Promise.all(parts)).flat();
    });
  }
}

/** The calls dataOf sends for `items` past one per shard holding some (ITEM_DATA_ROWS_PER_CALL items a call). */
export function extraDataCalls(board: PreparedBoard, items: string[]): number {
  const perShard = new Map<ShardKeys, number>();
  for (const item of new Set(items)) {
    const shard = board.shardOf(item);
    perShard.set(shard, (perShard.get(shard) ?? 0) + 1);
  }
  let extra = 0;
  for (const count of perShard.values()) extra += Math.ceil(count / ITEM_DATA_ROWS_PER_CALL) - 1;
  return extra;
}
