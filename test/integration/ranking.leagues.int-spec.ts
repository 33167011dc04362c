/**
 * Leagues (batch cost, board changes, the bound on a step, rollover), from test/integration/parts/,
 * run as one Jest test file: each test file loads Nest, ioredis, the ranking graph and the Lua
 * library into a module registry of its own, which these four pay for once. Each part keeps its own
 * describe blocks, servers, key prefix and clock, as when it was a file of its own; `-t '<describe
 * name>'` runs one of them.
 */
import './parts/leagues-batch-cost.int';
import './parts/leagues-board-changes.int';
import './parts/leagues-step-bound.int';
import './parts/leagues-rollover.int';
