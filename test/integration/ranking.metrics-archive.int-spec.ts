/**
 * Metrics (counts, archived records and bounds, retraction, half-archived boards, views), from
 * test/integration/parts/, run as one Jest test file: each test file loads Nest, ioredis, the
 * ranking graph and the Lua library into a module registry of its own, which these six pay for
 * once. Each part keeps its own describe blocks, servers, key prefix and clock, as when it was a
 * file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/metric-counts.int';
import './parts/metrics-archive-records.int';
import './parts/metrics-archive-retraction.int';
import './parts/metrics-half-archived.int';
import './parts/metrics-archive-bounds.int';
import './parts/metric-views.property.int';
