/**
 * The cost of writes and archives (write and segmented-write commands, shards, tail pages and
 * packing, rebase chunks, rank drains, archive chunks and page bound), from
 * test/integration/parts/, run as one Jest test file: each test file loads Nest, ioredis, the
 * ranking graph and the Lua library into a module registry of its own, which these nine pay for
 * once. Each part keeps its own describe blocks, servers, key prefix and clock, as when it was a
 * file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/write-cost.int';
import './parts/segmented-write-commands.int';
import './parts/shard-cost.int';
import './parts/tail-page-cost.int';
import './parts/tail-pack.int';
import './parts/tail-small-slots.int';
import './parts/rebase-chunk.int';
import './parts/write-rank-drains.int';
import './parts/archive-chunks.int';
import './parts/archive-page-bound.int';
import './parts/archive-read-drain-weight.int';
