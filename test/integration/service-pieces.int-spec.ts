/**
 * Service pieces (scripts, metric formulas, the test HTTP helper, item data, growth, a Cluster behind a NAT map), from
 * test/integration/parts/, run as one Jest test file: each test file loads Nest, ioredis, the
 * ranking graph and the Lua library into a module registry of its own, which these six pay for
 * once. Each part keeps its own describe blocks, servers, key prefix and clock, as when it was a
 * file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/scripts.int';
import './parts/metric-formulas.int';
import './parts/test-http.int';
import './parts/item-data.int';
import './parts/growth.int';
import './parts/cluster-nat-map.int';
