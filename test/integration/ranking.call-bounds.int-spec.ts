/**
 * The bounds on one Redis call's work (lookups, ranks, counts above, distributions, history, item
 * data, segment drains, expiry; test/integration/parts/), run as one Jest test file: each test file
 * loads Nest, ioredis, the ranking graph and the Lua library into a module registry of its own, which
 * these pay for once. Each part keeps its own describe blocks, servers, key prefix and clock, as
 * when it was a file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/lookup-call-bound.int';
import './parts/rank-call-bound.int';
import './parts/count-above-call-bound.int';
import './parts/distribution-call-bound.int';
import './parts/history-call-bound.int';
import './parts/item-data-call-bound.int';
import './parts/segment-drain-call-bound.int';
import './parts/segment-page-commands.int';
import './parts/expire-call-bound.int';
import './parts/history-read-bounds.int';
import './parts/write-drain-weight.int';
