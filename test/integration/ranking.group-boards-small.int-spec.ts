/**
 * Group boards (a claim race, the store, sharded history, history retraction commands and splits,
 * config prunes, the part budget, quiet slot pages and values, history pages), from
 * test/integration/parts/, run as one Jest test file: each test file loads Nest, ioredis, the
 * ranking graph and the Lua library into a module registry of its own, which these ten pay for
 * once. Each part keeps its own describe blocks, servers, key prefix and clock, as when it was a
 * file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/group-boards-claim-race.int';
import './parts/group-boards.int';
import './parts/group-boards-history-sharded.int';
import './parts/group-history-retract-commands.int';
import './parts/group-history-retract-split.int';
import './parts/groups-config-prunes.int';
import './parts/group-boards-part-budget.int';
import './parts/group-boards-quiet-slot-pages.int';
import './parts/group-boards-quiet-values.int';
import './parts/group-boards-history-pages.int';
