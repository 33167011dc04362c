/**
 * Reads (lookup counts and node parts, exact reads, views, counted view calls), from
 * test/integration/parts/, run as one Jest test file: each test file loads Nest, ioredis, the
 * ranking graph and the Lua library into a module registry of its own, which these five pay for
 * once. Each part keeps its own describe blocks, servers, key prefix and clock, as when it was a
 * file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/lookup-count-calls.int';
import './parts/lookup-node-parts.int';
import './parts/exact-reads.int';
import './parts/views.int';
import './parts/counted-view-calls.int';
