/**
 * Prunes and drops (a board's drop, reset prunes resumed and in steps, item data pruned by a reset,
 * held archive prunes), from test/integration/parts/, run as one Jest test file: each test file
 * loads Nest, ioredis, the ranking graph and the Lua library into a module registry of its own,
 * which these five pay for once. Each part keeps its own describe blocks, servers, key prefix and
 * clock, as when it was a file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/board-drop.int';
import './parts/board-drop-steps.int';
import './parts/reset-prune-resumed.int';
import './parts/reset-prune-steps.int';
import './parts/item-data-reset-prune.int';
import './parts/archive-held-prunes.int';
