import { decodeIdempotent, IDEM_FIELDS, IdemCall, idemNamedArgs } from '../../redis/idempotency';
import { namedFunction } from '../../redis/named-function';
import { bareHeader, callArgs } from '../../redis/function-args';
import { typedFunction } from '../../redis/function-library';
import { ShardKeys } from '../core/board';
import { BoardCall } from '../core/script-call';
import { itemDataOf } from '../options/item-data/item-data';
import { sliceFunctions } from '../core/slice-functions';

const DATA_WRITE_ARGS = ['item', 'data', 'data_bytes', ...IDEM_FIELDS] as const;
const DATA_WRITE_REPLY = ['stored'] as const;

/** Item data of one shard: a retry-safe write (json null: remove), and the data of listed items. */
export const ITEMS_FUNCTIONS = {
  itemDataWrite: typedFunction({
    name: 'tbRankItemDataWrite',
    handler: 'item_data_write',
    numberOfKeys: 1,
    contract: { args: DATA_WRITE_ARGS, reply: DATA_WRITE_REPLY },
    build: (call: BoardCall & { item: string; json: string | null; idem?: IdemCall; dataBytes: number }) => ({
      keys: [call.shard.keys.cfg()],
      args: callArgs({ ...bareHeader(call.nowMs), version: call.board.config.version }, DATA_WRITE_ARGS, {
        item: call.item,
        data: call.json ?? '',
        data_bytes: call.dataBytes,
        ...idemNamedArgs(call.idem, ''),
      }),
    }),
    /** created: [bytes the item's data grew by] */
    decode: (raw, call) =>
      decodeIdempotent(
        'tbRankItemDataWrite',
        raw,
        call.idem,
        (reply) => reply.expectLength(DATA_WRITE_REPLY.length).flag(DATA_WRITE_REPLY.indexOf('stored')),
        1,
      ),
  }),

  itemDataRead: namedFunction({
    name: 'tbRankItemDataRead',
    handler: 'item_data_read',
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
};

/** The items slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ItemsFunctions extends sliceFunctions(ITEMS_FUNCTIONS) {}
