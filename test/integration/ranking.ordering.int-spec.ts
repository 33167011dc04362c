/**
 * Ordering (calendar windows, ties and held scores of any sign, the order's history, segments and
 * their edges, tie-break crossings and score texts), from test/integration/parts/, run as one Jest
 * test file: each test file loads Nest, ioredis, the ranking graph and the Lua library into a
 * module registry of its own, which these nine pay for once. Each part keeps its own describe
 * blocks, servers, key prefix and clock, as when it was a file of its own; `-t '<describe name>'`
 * runs one of them.
 */
import './parts/calendar.int';
import './parts/ties-any-sign.int';
import './parts/held-any-sign.int';
import './parts/order-history.int';
import './parts/segments.int';
import './parts/segment-edges.int';
import './parts/tiebreak-crossing-pages.int';
import './parts/tiebreak-crossing-prev.int';
import './parts/tiebreak-score-texts.int';
