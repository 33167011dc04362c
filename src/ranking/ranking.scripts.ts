import { join } from 'node:path';
import { ScriptDefinition } from '../redis/scripts';

const dir = join(__dirname, 'scripts');
const lib = [join(dir, 'window_lib.lua')];

/** Every ranking script; window scripts get the shared window library prepended. */
export const RANKING_SCRIPTS = {
  increment: { name: 'tbRankIncrement', file: join(dir, 'increment.lua'), libraries: lib, numberOfKeys: 'dynamic' },
  incrementBatch: {
    name: 'tbRankIncrementBatch',
    file: join(dir, 'increment_batch.lua'),
    libraries: lib,
    numberOfKeys: 'dynamic',
  },
  like: { name: 'tbRankLike', file: join(dir, 'like.lua'), libraries: lib, numberOfKeys: 'dynamic' },
  expire: { name: 'tbRankExpire', file: join(dir, 'expire.lua'), libraries: lib, numberOfKeys: 'dynamic' },
  readTop: { name: 'tbRankReadTop', file: join(dir, 'read_top.lua'), libraries: lib, numberOfKeys: 3 },
  readItem: { name: 'tbRankReadItem', file: join(dir, 'read_item.lua'), libraries: lib, numberOfKeys: 3 },
  readAround: { name: 'tbRankReadAround', file: join(dir, 'read_around.lua'), libraries: lib, numberOfKeys: 3 },
  boardPut: { name: 'tbRankBoardPut', file: join(dir, 'board_put.lua'), libraries: lib, numberOfKeys: 1 },
  boardDelete: { name: 'tbRankBoardDelete', file: join(dir, 'board_delete.lua'), libraries: lib, numberOfKeys: 2 },
  shardSync: { name: 'tbRankShardSync', file: join(dir, 'shard_sync.lua'), libraries: lib, numberOfKeys: 1 },
  countAbove: { name: 'tbRankCountAbove', file: join(dir, 'count_above.lua'), libraries: lib, numberOfKeys: 'dynamic' },
  readNeighbours: {
    name: 'tbRankReadNeighbours',
    file: join(dir, 'read_neighbours.lua'),
    libraries: lib,
    numberOfKeys: 3,
  },
} satisfies Record<string, ScriptDefinition>;
