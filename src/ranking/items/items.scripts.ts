import { join } from 'node:path';
import { decodeIdempotent, IdemCall, idemArgs } from '../../redis/idempotency';
import { Reply } from '../../redis/replies';
import { KEYS_LIBRARY, ScriptCommand, typedScript } from '../../redis/scripts';
import { ShardKeys } from '../core/board';
import { BOARD_WRITE_LIBRARIES, BoardCall, ITEM_DATA_LIBRARY } from '../core/script-call';
import { itemDataOf } from '../core/item-data';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    tbRankItemDataWrite: ScriptCommand<Context>;
    tbRankItemDataRead: ScriptCommand<Context>;
  }
}

const dir = join(__dirname, 'scripts');

/** Item data of one shard: a retry-safe write (json null: remove), and the data of listed items. */
export const ITEMS_SCRIPTS = {
  itemDataWrite: typedScript({
    name: 'tbRankItemDataWrite',
    file: join(dir, 'item_data_write.lua'),
    libraries: BOARD_WRITE_LIBRARIES,
    numberOfKeys: 1,
    build: (call: BoardCall & { item: string; json: string | null; idem?: IdemCall }) => ({
      keys: [call.shard.keys.cfg()],
      args: [call.board.config.version, call.nowMs, call.item, call.json ?? '', ...idemArgs(call.idem, '')],
    }),
    decode: (raw, call) =>
      decodeIdempotent('tbRankItemDataWrite', raw, call.idem, (reply) => reply.expectLength(1).flag(0)),
  }),

  itemDataRead: typedScript({
    name: 'tbRankItemDataRead',
    file: join(dir, 'item_data_read.lua'),
    libraries: [KEYS_LIBRARY, ITEM_DATA_LIBRARY],
    numberOfKeys: 1,
    build: (call: { shard: ShardKeys; items: string[] }) => ({ keys: [call.shard.keys.cfg()], args: call.items }),
    decode: (raw, call) => itemDataOf(new Reply('tbRankItemDataRead', raw), call.items.length),
  }),
};
