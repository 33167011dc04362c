/**
 * The stores (counters, stats, boards, sharded boards, the registry, call state), from
 * test/integration/parts/, run as one Jest test file: each test file loads Nest, ioredis, the
 * ranking graph and the Lua library into a module registry of its own, which these six pay for
 * once. Each part keeps its own describe blocks, servers, key prefix and clock, as when it was a
 * file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/counters-store.int';
import './parts/stats-store.int';
import './parts/store-boards.int';
import './parts/store-sharded.int';
import './parts/registry.int';
import './parts/call-state.int';
