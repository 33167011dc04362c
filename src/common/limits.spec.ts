import * as ranking from '../ranking/core/ranking.limits';
import * as counters from '../counters/counters.limits';
import * as stats from '../stats/stats.limits';
import * as governance from '../governance/governance.limits';
import * as common from './limits';

/*
 * The values the API contract (README, API docs) promises clients. Each limit is defined once and read
 * from there by the DTOs, their OpenAPI schema, the compiled checks and the maths, so only this spec
 * (and the e2e messages) notice when one changes: changing one is a contract change, made on purpose.
 */
describe('limits promised by the API contract', () => {
  it.each([
    ['name characters', common.NAME_LENGTH_CHARS, { min: 1, max: 64 }],
    ['id characters', common.ID_LENGTH_CHARS, { min: 1, max: 128 }],
    ['page limit', common.PAGE_LIMIT_ITEMS, { min: 1, max: 1000 }],
    ['page offset', common.PAGE_OFFSET_ITEMS, { min: 0, max: 1_000_000 }],
    ['unix seconds', common.UNIX_SEC, { min: 0, max: 9_999_999_999 }],
    ['durations', common.DURATION_SEC, { min: 1, max: 400 * 86400 }],
    ['amount', ranking.AMOUNT_RANGE, { min: -1_000_000, max: 1_000_000 }],
    ['batch entries', ranking.BATCH_ENTRIES, { min: 1, max: 1000 }],
    ['around radius', ranking.RADIUS_ITEMS, { min: 1, max: 100 }],
    ['windows per board', ranking.WINDOWS_PER_BOARD, { min: 1, max: 8 }],
    ['shards per board', ranking.SHARDS_PER_BOARD, { min: 1, max: 64 }],
    ['counter count', counters.COUNT_RANGE, { min: -1_000_000, max: 1_000_000 }],
    ['stats value', stats.VALUE_RANGE, { min: -1e100, max: 1e100 }],
    ['stats context characters', stats.CONTEXT_LENGTH_CHARS, { min: 1, max: 200 }],
    ['slowest limit', stats.SLOWEST_LIMIT_ITEMS, { min: 1, max: 100 }],
    ['local metrics seconds', governance.LOCAL_READ_SPAN_SEC, { min: 1, max: 60 }],
  ])('%s', (_, bounds, promised) => {
    expect(bounds).toEqual(promised);
  });

  it.each([
    ['slots per window', ranking.MAX_SLOTS_PER_WINDOW, 10_000],
    ['sharded top depth', ranking.MAX_SHARDED_DEPTH_ITEMS, 10_000],
    ['weighed actors per board', ranking.WEIGHED_ACTORS_PER_BOARD, 1000],
    ['slowest contexts kept', stats.SLOWEST_KEPT_CONTEXTS, 100],
    ['future skew of a counter sample (s)', counters.MAX_FUTURE_SKEW_SEC, 5],
    ['precision in config (s)', counters.MAX_PRECISION_SEC, 365 * 86400],
    ['precision characters', counters.MAX_PRECISION_CHARS, 16],
    ['default amount', ranking.DEFAULT_AMOUNT, 1],
    ['default count', counters.DEFAULT_COUNT, 1],
    ['default top limit', ranking.DEFAULT_TOP_ITEMS, 10],
    ['default list limit', common.DEFAULT_LIST_PAGE_ITEMS, 100],
    ['default radius', ranking.DEFAULT_RADIUS_ITEMS, 5],
    ['default slowest limit', stats.DEFAULT_SLOWEST_ITEMS, 10],
    ['local metrics span (s)', governance.LOCAL_SPAN_SEC, 60],
    ['default local metrics seconds', governance.DEFAULT_LOCAL_READ_SPAN_SEC, 10],
  ])('%s', (_, value, promised) => {
    expect(value).toBe(promised);
  });
});
