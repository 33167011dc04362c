import { Injectable } from '@nestjs/common';
import { IdemCalls, Idempotent, IdemRequest } from '../../redis/idempotency';
import { PreparedBoard, readPerShard } from '../core/board';
import { guard } from '../core/ranking.errors';
import type { ItemData } from '../options/item-data/item-data';
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

  /** The data of `items` (items without data are absent): one call per shard holding some of them. */
  dataOf(board: PreparedBoard, items: string[]): Promise<Map<string, ItemData>> {
    return readPerShard(board, items, (shard, ids) =>
      this.functions.call(this.fns.itemDataRead, { shard, items: ids }),
    );
  }
}
