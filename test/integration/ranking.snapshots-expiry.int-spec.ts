/**
 * Snapshots and expiry (crossing, reads apart, due slots, stored windows, the expiry listing and
 * drain weight), from test/integration/parts/, run as one Jest test file: each test file loads
 * Nest, ioredis, the ranking graph and the Lua library into a module registry of its own, which
 * these six pay for once. Each part keeps its own describe blocks, servers, key prefix and clock,
 * as when it was a file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/snapshot-crossing.int';
import './parts/snapshot-read-apart.int';
import './parts/slot-due.int';
import './parts/stored-windows.int';
import './parts/expire-listing-apart.int';
import './parts/expire-drain-weight.int';
