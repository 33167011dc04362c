/**
 * Retractions (cost, listings, slot pages, steps across shutdowns, a Redis outage), from
 * test/integration/parts/, run as one Jest test file: each test file loads Nest, ioredis, the
 * ranking graph and the Lua library into a module registry of its own, which these five pay for
 * once. Each part keeps its own describe blocks, servers, key prefix and clock, as when it was a
 * file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/retraction-cost.int';
import './parts/retraction-listings.int';
import './parts/retraction-slot-pages.int';
import './parts/retraction.int';
import './parts/retraction-outage.int';
