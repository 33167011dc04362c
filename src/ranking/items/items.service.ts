import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { NotFoundError } from '../../common/errors';
import { WriteAnswer } from '../../common/retry-safe';
import { ONE_ANSWER, withAnswerBudget } from '../../governance/answer-budget';
import { ClientBudget, growthErrorOf, reserveGrowth } from '../../governance/growth-quotas';
import { idemRequest } from '../../redis/idempotency';
import { BoardCache } from '../boards/board-cache';
import { type ItemData, itemDataJson } from '../options/item-data/item-data';
import { ITEM_DATA_MESSAGES } from '../options/item-data/item-data.limits';
import { ItemDataStore } from './items.store';

/** A data write as the client sent it: `data` undefined removes the item's data. */
export interface ItemDataRequest {
  name: string;
  item: string;
  data?: unknown;
  idemKey?: string;
  budget?: ClientBudget;
}

/** Item data: stored on the item's shard for as long as some window holds the item, answered with rows on request. */
@Injectable()
export class ItemDataService {
  constructor(
    private readonly cache: BoardCache,
    private readonly store: ItemDataStore,
    private readonly clock: Clock,
  ) {}

  /** Stores (data given) or removes the item's data; retry-safe with an Idempotency-Key. */
  write(request: ItemDataRequest): Promise<WriteAnswer<null>> {
    const { name, item, idemKey, budget } = request;
    const json = request.data === undefined ? null : itemDataJson(request.data);
    const keyed = idemRequest(idemKey, [json === null ? 'dataDelete' : 'dataPut', name, item, json]);
    return this.cache.withBoard(name, (board) =>
      withAnswerBudget(budget, keyed, ONE_ANSWER, async (idem) => {
        // A removal adds nothing; data reserves its whole length and keeps what it grew the stored data by.
        const reservation = reserveGrowth(budget, json === null ? {} : { itemDataBytes: Buffer.byteLength(json) });
        try {
          const nowMs = this.clock.nowMs();
          const dataBytes = reservation.allowance('itemDataBytes');
          const written = await this.store.write({ board, nowMs, item, json, idem, dataBytes });
          reservation.settle({ itemDataBytes: written.created.data_bytes });
          return { replayed: written.replayed, body: null };
        } catch (error) {
          reservation.settle();
          if (error instanceof Error && error.message.includes('TB_ITEM_NOT_HELD'))
            throw new NotFoundError('ITEM_NOT_FOUND', ITEM_DATA_MESSAGES.itemNotHeld(name, item));
          throw growthErrorOf(error, reservation, () => error as Error);
        }
      }),
    );
  }

  /**
   * `rows` each with its item's data (null: none) when `wanted`; as they are otherwise. `charge` is told
   * the data calls past one per shard (many rows are read in several calls: items.store's dataOf).
   */
  async attach<Row extends { item: string }>(
    name: string,
    rows: Row[],
    wanted: boolean | undefined,
    charge?: (calls: number) => void,
  ): Promise<Array<Row & { data?: ItemData | null }>> {
    if (!wanted || rows.length === 0) return rows;
    const items = rows.map((row) => row.item);
    const found = await this.cache.withBoard(name, (board) => this.store.dataOf(board, items, charge));
    return rows.map((row) => ({ ...row, data: found.get(row.item) ?? null }));
  }
}
