import { functionSet } from '../../redis/function-library';
import type { IdemCall } from '../../redis/idempotency';
import { idempotentFunction } from '../../redis/named-function';
import { BoardCall, perItemRead, versionHeader } from '../core/script-call';
import { itemDataOf } from '../options/item-data/item-data';
import { sliceFunctions } from '../core/slice-functions';

/** Item data of one shard: a retry-safe write (json null: remove), and the data of listed items. */
export const ITEMS_FUNCTIONS = functionSet('tbRank', {
  itemDataWrite: idempotentFunction({
    numberOfKeys: 1,
    args: ['item', 'data', 'data_bytes'],
    reply: ['stored'],
    /** The bytes the item's data grew by. */
    created: ['data_bytes'],
    build: (call: BoardCall & { item: string; json: string | null; idem?: IdemCall; dataBytes: number }) => ({
      keys: [call.shard.keys.cfg()],
      header: versionHeader(call),
      args: { item: call.item, data: call.json ?? '', data_bytes: call.dataBytes },
    }),
    decode: (reply) => reply.flag('stored'),
  }),

  itemDataRead: perItemRead('data', itemDataOf),
});

/** The items slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ItemsFunctions extends sliceFunctions(ITEMS_FUNCTIONS) {}
