/**
 * The ranking read files and leagues over HTTP (test/e2e/parts/), run as one Jest test file: each test
 * file loads Nest and the service's sources into a module registry of its own (about 2 400 modules,
 * some 2.5 s of CPU), which these eleven pay for once. Each part keeps its own describe blocks, app,
 * Redis key prefix and clock, as when it was a file of its own; `-t '<describe name>'` runs one of them.
 */
import './parts/ranking.e2e';
import './parts/ranking-boards.e2e';
import './parts/ties.e2e';
import './parts/order.e2e';
import './parts/tiebreak.e2e';
import './parts/tail.e2e';
import './parts/alltime.e2e';
import './parts/calendar.e2e';
import './parts/standing.e2e';
import './parts/spans.e2e';
import './parts/leagues.e2e';
