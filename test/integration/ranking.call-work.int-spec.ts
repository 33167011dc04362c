/**
 * The work of one call (coalesced calls, filter exclusions and spans, the span's tail, score
 * writes, segmented batches and single writes, writes on views), from test/integration/parts/, run as
 * one Jest test file: each test file loads Nest, ioredis, the ranking graph and the Lua library into a
 * module registry of its own, which these nine pay for once. Each part keeps its own describe blocks,
 * servers, key prefix and clock, as when it was a file of its own; `-t '<describe name>'` runs one
 * of them.
 */
import './parts/coalesced-call-work.int';
import './parts/filter-exclusions-calls.int';
import './parts/filter-span-call-bound.int';
import './parts/filter-span-tail.int';
import './parts/filter-spans-calls.int';
import './parts/score-write-commands.int';
import './parts/segmented-batch-calls.int';
import './parts/segmented-single-write.int';
import './parts/view-write-commands.int';
