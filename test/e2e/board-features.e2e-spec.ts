/**
 * Actors and their weights (the bound on weighed actors too), identity, fan-out and shared reads,
 * segments, the idempotency budget and growth quotas (test/e2e/parts/), run as one Jest test file: each
 * test file loads Nest and the service's sources into a module registry of its own (about 2 400
 * modules, some 2.5 s of CPU), which these nine pay for once. Each part keeps its own describe blocks,
 * app, Redis key prefix and clock, as when it was a file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/actors.e2e';
import './parts/actor-weights.e2e';
import './parts/actor-weights-bound.e2e';
import './parts/identity.e2e';
import './parts/fanout-reads.e2e';
import './parts/shared-reads.e2e';
import './parts/segments.e2e';
import './parts/idempotency-budget.e2e';
import './parts/growth-entries.e2e';
