/**
 * History pages, timestamped writes, error codes, access rules, governance, the HTTP edge's bounds, the
 * hardening rows and the connection caps (test/e2e/parts/), run as one Jest test file: each test file
 * loads Nest and the service's sources into a module registry of its own (about 2 400 modules, some
 * 2.5 s of CPU), which these eight pay for once. Each part keeps its own describe blocks, app, Redis key
 * prefix and clock, as when it was a file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/history.e2e';
import './parts/timestamped.e2e';
import './parts/errors.e2e';
import './parts/access.e2e';
import './parts/governance.e2e';
import './parts/edge.e2e';
import './parts/hardening-edge.e2e';
import './parts/connections.e2e';
