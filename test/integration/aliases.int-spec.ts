/**
 * Aliases (the store, ingest, the property, a step's progress), from test/integration/parts/, run
 * as one Jest test file: each test file loads Nest, ioredis, the ranking graph and the Lua library
 * into a module registry of its own, which these four pay for once. Each part keeps its own
 * describe blocks, servers, key prefix and clock, as when it was a file of its own; `-t '<describe
 * name>'` runs one of them.
 */
import './parts/aliases.int';
import './parts/ingest-aliases.int';
import './parts/aliases.property.int';
import './parts/alias-step-progress.int';
