import { functionSet } from '../../redis/function-library';
import type { IdemCall } from '../../redis/idempotency';
import { idempotentFunction, namedFunction } from '../../redis/named-function';
import { bareHeader } from '../../redis/function-args';
import { ShardKeys } from '../core/board';
import { BoardCall, versionHeader } from '../core/script-call';
import { itemDataOf } from '../options/item-data/item-data';
import { sliceFunctions } from '../core/slice-functions';

/** Item data of one shard: a retry-safe write (json null: remove), and the data of listed items. */
export const ITEMS_FUNCTIONS = functionSet('tbRank', {
  itemDataWrite: idempotentFunction({
    numberOfKeys: 1,
    args: ['item', 'data', 'data_bytes'],
    reply: ['stored'],
    /** created: [bytes the item's data grew by] */
    createdKinds: 1,
    build: (call: BoardCall & { item: string; json: string | null; idem?: IdemCall; dataBytes: number }) => ({
      keys: [call.shard.keys.cfg()],
      header: versionHeader(call),
      args: { item: call.item, data: call.json ?? '', data_bytes: call.dataBytes },
    }),
    decode: (reply) => reply.flag('stored'),
  }),

  itemDataRead: namedFunction({
    flags: ['no-writes'],
    numberOfKeys: 1,
    args: ['items'],
    reply: ['data'],
    build: (call: { shard: ShardKeys; items: string[] }) => ({
      keys: [call.shard.keys.cfg()],
      header: bareHeader(0),
      args: { items: JSON.stringify(call.items) },
    }),
    decode: (reply, call) => itemDataOf(reply.nested('data'), call.items.length),
  }),
});

/** The items slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ItemsFunctions extends sliceFunctions(ITEMS_FUNCTIONS) {}
