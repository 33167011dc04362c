/**
 * Counters, stats, metrics, aggregates, item data, CORS, groups, write cost, moderation, fast routes and
 * retry-safe writes (test/e2e/parts/), run as one Jest test file: each test file loads Nest and the
 * service's sources into a module registry of its own (about 2 400 modules, some 2.5 s of CPU), which
 * these twelve pay for once. Each part keeps its own describe blocks, app, Redis key prefix and clock,
 * as when it was a file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/stats.e2e';
import './parts/metrics.e2e';
import './parts/counters.e2e';
import './parts/aggregate.e2e';
import './parts/lookup-data.e2e';
import './parts/cors.e2e';
import './parts/groups.e2e';
import './parts/min-actors.e2e';
import './parts/write-cost.e2e';
import './parts/moderation.e2e';
import './parts/fast-routes.e2e';
import './parts/retry-safe.e2e';
