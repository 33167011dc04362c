/**
 * Increment properties (idempotency, counters, plain increments, interleaved plain increments),
 * from test/integration/parts/, run as one Jest test file: each test file loads Nest, ioredis, the
 * ranking graph and the Lua library into a module registry of its own, which these four pay for
 * once. Each part keeps its own describe blocks, servers, key prefix and clock, as when it was a
 * file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/idempotency.property.int';
import './parts/counters.property.int';
import './parts/plain-increments.property.int';
import './parts/plain-increments-interleaved.property.int';
