import { decodeIdempotent, IdemCall, idemArgs } from '../../redis/idempotency';
import { bareHeader, callArgs } from '../../redis/function-args';
import { NamedReply } from '../../redis/replies';
import { typedFunction } from '../../redis/function-library';
import { ShardKeys } from '../core/board';
import { BoardCall } from '../core/script-call';
import { itemDataOf } from '../core/item-data';
import { sliceFunctions } from '../core/slice-functions';

const DATA_READ_ARGS = ['items'] as const;
const DATA_READ_REPLY = ['data'] as const;

/** Item data of one shard: a retry-safe write (json null: remove), and the data of listed items. */
export const ITEMS_FUNCTIONS = {
  itemDataWrite: typedFunction({
    name: 'tbRankItemDataWrite',
    handler: 'item_data_write',
    numberOfKeys: 1,
    build: (call: BoardCall & { item: string; json: string | null; idem?: IdemCall; dataBytes: number }) => ({
      keys: [call.shard.keys.cfg()],
      args: [
        call.board.config.version,
        call.nowMs,
        call.item,
        call.json ?? '',
        ...idemArgs(call.idem, ''),
        call.dataBytes,
      ],
    }),
    /** created: [bytes the item's data grew by] */
    decode: (raw, call) =>
      decodeIdempotent('tbRankItemDataWrite', raw, call.idem, (reply) => reply.expectLength(1).flag(0), 1),
  }),

  itemDataRead: typedFunction({
    name: 'tbRankItemDataRead',
    handler: 'item_data_read',
    flags: ['no-writes'],
    numberOfKeys: 1,
    contract: { args: DATA_READ_ARGS, reply: DATA_READ_REPLY },
    build: (call: { shard: ShardKeys; items: string[] }) => ({
      keys: [call.shard.keys.cfg()],
      args: callArgs(bareHeader(0), DATA_READ_ARGS, { items: JSON.stringify(call.items) }),
    }),
    decode: (raw, call) =>
      itemDataOf(new NamedReply('tbRankItemDataRead', DATA_READ_REPLY, raw).nested('data'), call.items.length),
  }),
};

/** The items slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ItemsFunctions extends sliceFunctions(ITEMS_FUNCTIONS) {}
