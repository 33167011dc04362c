/**
 * Moderation (kept states, instances, history, write ranks, archive index periods, sharded archive
 * depth), from test/integration/parts/, run as one Jest test file: each test file loads Nest,
 * ioredis, the ranking graph and the Lua library into a module registry of its own, which these six
 * pay for once. Each part keeps its own describe blocks, servers, key prefix and clock, as when it
 * was a file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/moderation-kept-states.int';
import './parts/moderation-instances.int';
import './parts/moderation-history.int';
import './parts/moderation-write-ranks.int';
import './parts/moderation-archive-index-periods.int';
import './parts/sharded-moderated-archive-depth.int';
