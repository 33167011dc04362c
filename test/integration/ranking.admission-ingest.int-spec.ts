/**
 * Admission and ingest (admission, batch admission, applying ingest, the ingest lag, late scores,
 * coalescing, enabled options, the scheduler's timeout), from test/integration/parts/, run as one
 * Jest test file: each test file loads Nest, ioredis, the ranking graph and the Lua library into a
 * module registry of its own, which these eight pay for once. Each part keeps its own describe
 * blocks, servers, key prefix and clock, as when it was a file of its own; `-t '<describe name>'`
 * runs one of them.
 */
import './parts/admission.int';
import './parts/batch-admission.int';
import './parts/ingest-apply.int';
import './parts/ingest-redis-lag.int';
import './parts/late-scores.int';
import './parts/coalescing.int';
import './parts/enabled-options.int';
import './parts/scheduler-timeout.int';
