import {
  AMOUNT_RANGE,
  BATCH_ENTRIES,
  DEFAULT_AMOUNT,
  DEFAULT_RADIUS_ITEMS,
  DEFAULT_TOP_ITEMS,
  MAX_SHARDED_DEPTH_ITEMS,
  MAX_SLOTS_PER_WINDOW,
  RADIUS_ITEMS,
  SHARDS_PER_BOARD,
  WEIGHED_ACTORS_PER_BOARD,
  WINDOWS_PER_BOARD,
} from '../ranking/core/ranking.limits';
import {
  COUNT_RANGE,
  DEFAULT_COUNT,
  MAX_FUTURE_SKEW_SEC,
  MAX_PRECISION_CHARS,
  MAX_PRECISION_SEC,
} from '../counters/counters.limits';
import {
  CONTEXT_LENGTH_CHARS,
  DEFAULT_SLOWEST_ITEMS,
  SLOWEST_KEPT_CONTEXTS,
  SLOWEST_LIMIT_ITEMS,
  VALUE_RANGE,
} from '../stats/stats.limits';
import { DEFAULT_LOCAL_READ_SPAN_SEC, LOCAL_READ_SPAN_SEC, LOCAL_SPAN_SEC } from '../governance/governance.limits';
import {
  DEFAULT_LIST_PAGE_ITEMS,
  DURATION_SEC,
  ID_LENGTH_CHARS,
  NAME_LENGTH_CHARS,
  PAGE_LIMIT_ITEMS,
  PAGE_OFFSET_ITEMS,
  UNIX_SEC,
} from './limits';

/*
 * The values the API contract (README, API docs) promises clients. Each limit is defined once and read
 * from there by the DTOs, their OpenAPI schema, the compiled checks and the maths, so only this spec
 * (and the e2e messages) notice when one changes: changing one is a contract change, made on purpose.
 */
describe('limits promised by the API contract', () => {
  it.each([
    ['name characters', NAME_LENGTH_CHARS, { min: 1, max: 64 }],
    ['id characters', ID_LENGTH_CHARS, { min: 1, max: 128 }],
    ['page limit', PAGE_LIMIT_ITEMS, { min: 1, max: 1000 }],
    ['page offset', PAGE_OFFSET_ITEMS, { min: 0, max: 1_000_000 }],
    ['unix seconds', UNIX_SEC, { min: 0, max: 9_999_999_999 }],
    ['durations', DURATION_SEC, { min: 1, max: 400 * 86400 }],
    ['amount', AMOUNT_RANGE, { min: -1_000_000, max: 1_000_000 }],
    ['batch entries', BATCH_ENTRIES, { min: 1, max: 1000 }],
    ['around radius', RADIUS_ITEMS, { min: 1, max: 100 }],
    ['windows per board', WINDOWS_PER_BOARD, { min: 1, max: 8 }],
    ['shards per board', SHARDS_PER_BOARD, { min: 1, max: 64 }],
    ['counter count', COUNT_RANGE, { min: -1_000_000, max: 1_000_000 }],
    ['stats value', VALUE_RANGE, { min: -1e100, max: 1e100 }],
    ['stats context characters', CONTEXT_LENGTH_CHARS, { min: 1, max: 200 }],
    ['slowest limit', SLOWEST_LIMIT_ITEMS, { min: 1, max: 100 }],
    ['local metrics seconds', LOCAL_READ_SPAN_SEC, { min: 1, max: 60 }],
  ])('%s', (_, bounds, promised) => {
    expect(bounds).toEqual(promised);
  });

  it.each([
    ['slots per window', MAX_SLOTS_PER_WINDOW, 10_000],
    ['sharded top depth', MAX_SHARDED_DEPTH_ITEMS, 10_000],
    ['weighed actors per board', WEIGHED_ACTORS_PER_BOARD, 1000],
    ['slowest contexts kept', SLOWEST_KEPT_CONTEXTS, 100],
    ['future skew of a counter sample (s)', MAX_FUTURE_SKEW_SEC, 5],
    ['precision in config (s)', MAX_PRECISION_SEC, 365 * 86400],
    ['precision characters', MAX_PRECISION_CHARS, 16],
    ['default amount', DEFAULT_AMOUNT, 1],
    ['default count', DEFAULT_COUNT, 1],
    ['default top limit', DEFAULT_TOP_ITEMS, 10],
    ['default list limit', DEFAULT_LIST_PAGE_ITEMS, 100],
    ['default radius', DEFAULT_RADIUS_ITEMS, 5],
    ['default slowest limit', DEFAULT_SLOWEST_ITEMS, 10],
    ['local metrics span (s)', LOCAL_SPAN_SEC, 60],
    ['default local metrics seconds', DEFAULT_LOCAL_READ_SPAN_SEC, 10],
  ])('%s', (_, value, promised) => {
    expect(value).toBe(promised);
  });
});
