/**
 * Trending views, live streams (a group board's too) and their limits, write coalescing, plain
 * increments, load shedding, growth quotas and the segments' bounds (test/e2e/parts/), run as one Jest
 * test file: each test file loads Nest and the service's sources into a module registry of its own
 * (about 2 400 modules, some 2.5 s of CPU), which these parts pay for once. Each part keeps its own
 * describe blocks, app, Redis key prefix and clock, as when it was a file of its own; `-t '<describe
 * name>'` runs one of them.
 */
import './parts/trending.e2e';
import './parts/stream.e2e';
import './parts/stream-filters.e2e';
import './parts/stream-metrics.e2e';
import './parts/stream-group-boards.e2e';
import './parts/stream-limits.e2e';
import './parts/coalescing.e2e';
import './parts/plain-increments.e2e';
import './parts/load-shedding.e2e';
import './parts/growth.e2e';
import './parts/segments-board-max.e2e';
import './parts/segments-page-cost.e2e';
