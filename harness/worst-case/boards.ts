/**
 * The worst-case harness's boards: between them every board option at its documented maximum (the
 * coverage test reads the maxima from the OpenAPI document and fails when an option has no board).
 * Their data grows with the scale: `ci` is small enough for `npm test`, `full` is what `npm run abuse`
 * seeds.
 */
import { MODERATED_GROUP_ITEMS_PER_SHARD, MODERATED_GROUPS_PER_BOARD } from '../../src/ranking/core/ranking.limits';
import { CAP_PER_ITEM } from '../../src/ranking/options/actor-caps/actor-caps.option';
import { GROUP_BOARDS } from './group-boards';

export type Scale = 'ci' | 'full';

export interface Sizes {
  /** Items seeded on the sum boards. */
  items: number;
  /** Slots of the `last` board each seeded item holds a value in (every window's newest). */
  lastSlots: number;
  /** Closed calendar periods seeded, and rows of each. */
  periods: number;
  periodRows: number;
  /** Snapshot boundaries seeded on the history window. */
  snapshots: number;
  /** Segments and actors spread over the seeded events. */
  segments: number;
  actors: number;
}

export const SIZES: Record<Scale, Sizes> = {
  ci: { items: 2_000, lastSlots: 60, periods: 3, periodRows: 300, snapshots: 4, segments: 50, actors: 200 },
  full: {
    items: 100_000,
    lastSlots: 1_000,
    periods: 100,
    periodRows: 10_000,
    snapshots: 100,
    segments: 2_000,
    actors: 10_000,
  },
};

const MINUTE_SEC = 60;

/** Eight rolling windows of every interval, periods up to the 400-day cap (also the sharded call-bound specs' boards). */
export const EIGHT_ROLLING_WINDOWS = [
  { name: 'm', period: '10h', interval: '1m' },
  { name: 'h', period: '24h', interval: '1h' },
  { name: 'd', period: '400d', interval: '1d' },
  { name: 'wk', period: '7d', interval: '1h' },
  { name: 'mo', period: '30d', interval: '1d' },
  { name: 'six', period: '6h', interval: '1m' },
  { name: 'q', period: '90d', interval: '1d' },
  { name: 'hour', period: '1h', interval: '1m' },
];

/** Those windows with the most slots a window may hold, the longest period, snapshots at their maximum. */
const SUM_WINDOWS = [
  { ...EIGHT_ROLLING_WINDOWS[0], period: 10_000 * MINUTE_SEC, snapshots: { keep: 1000, top: 1000 } },
  ...EIGHT_ROLLING_WINDOWS.slice(1),
];

/** Eight views: every mode, over the longest and the busiest windows. */
const SUM_VIEWS = [
  { name: 'fading', mode: 'decay', window: 'm', halfLife: '30m' },
  { name: 'daily', mode: 'decay', window: 'h', halfLife: '2h' },
  { name: 'hot', mode: 'hot', window: 'h', tau: '12h' },
  { name: 'hotm', mode: 'hot', window: 'm' },
  { name: 'rising', mode: 'rising', window: 'h', baseline: 'mo', minCount: 1_000_000_000 },
  { name: 'risingm', mode: 'rising', window: 'six', baseline: 'h' },
  { name: 'people', mode: 'unique', window: 'm' },
  { name: 'peopleh', mode: 'unique', window: 'h' },
];

const SUM_BOARD = {
  windows: SUM_WINDOWS,
  views: SUM_VIEWS,
  ties: 'first' as const,
  segments: { max: 10_000 },
  actors: { capPerItem: CAP_PER_ITEM.max },
  maxItems: 100_000_000,
};

/**
 * The costliest board with segments a default instance takes (its single write within
 * WRITE_COST_PER_CALL, else 400 BOARD_WRITE_TOO_COSTLY): an event naming 8 segments and an actor on
 * `ties: first` and capped actors leaves room for 4 windows and a unique view, 6.5 results × 25 places
 * × 11 units = 1 787.5 units of 1 800.
 */
const SEGMENTED_BOARD = {
  ...SUM_BOARD,
  windows: SUM_WINDOWS.slice(0, 4),
  views: SUM_VIEWS.filter((view) => view.name === 'people'),
};

/** The most metrics a board may declare (METRICS_PER_BOARD): each a parallel set of the windows. */
export const METRIC_NAMES = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8'];

/** Metrics go with neither segments nor actors (so no unique views): the sum board's other options. */
const METRICS_BOARD = {
  windows: SUM_WINDOWS,
  views: SUM_VIEWS.filter((view) => view.mode !== 'unique'),
  ties: 'first' as const,
  metrics: METRIC_NAMES,
  maxItems: 100_000_000,
};

/**
 * The most views (VIEWS_PER_BOARD) of two metrics, wilson and controversial by turns, one per window,
 * each against the last metric: a write of it scores the item again in all eight (both metrics' counts).
 */
const RATED_BOARD = {
  ...METRICS_BOARD,
  views: SUM_WINDOWS.map((window, i) => ({
    name: `rated${i + 1}`,
    mode: i % 2 === 0 ? 'wilson' : 'controversial',
    window: window.name,
    positive: METRIC_NAMES[i % (METRIC_NAMES.length - 1)],
    negative: METRIC_NAMES[METRIC_NAMES.length - 1],
  })),
};

/** A `last` board, lowest score first, reviewing: eight windows of the most slots such a board may hold (1 000 each). */
const LAST_BOARD = {
  aggregate: 'last' as const,
  order: 'asc' as const,
  // A review board: lists only allowed items (none here), so its review queue is its whole listing.
  moderation: { review: true },
  windows: Array.from({ length: 8 }, (_, i) => ({
    name: `l${i + 1}`,
    period: 1000 * (i + 1) * MINUTE_SEC,
    interval: (i + 1) * MINUTE_SEC,
  })),
};

/**
 * An all-time window (it keeps every item for good, so the board has a cap) beside seven rolling
 * windows of 1 000 slots on a max board: a score dated years back lands in the all-time window alone.
 */
const EVER_BOARD = {
  aggregate: 'max' as const,
  maxItems: 100_000_000,
  windows: [
    { name: 'ever', allTime: true },
    ...Array.from({ length: 7 }, (_, i) => ({
      name: `r${i + 1}`,
      period: 1000 * (i + 1) * MINUTE_SEC,
      interval: (i + 1) * MINUTE_SEC,
    })),
  ],
};

/**
 * A competition board on the most shards: records are (score, tiebreak) pairs in eight windows of
 * 1 000 slots, every item seeded with one score, so each count ahead of a pair is a binary search over
 * the whole run of that score on every shard (tiebreak_lib); lowest score first (`order: asc`: the
 * order option's hooks are asked before the pairs answer, and the pair order is read from its low end).
 */
const TIEBREAK_BOARD = {
  aggregate: 'max' as const,
  order: 'asc' as const,
  tiebreak: { order: 'desc' as const },
  shards: 64,
  windows: Array.from({ length: 8 }, (_, i) => ({
    name: `t${i + 1}`,
    period: 1000 * (i + 1) * MINUTE_SEC,
    interval: (i + 1) * MINUTE_SEC,
  })),
};

/**
 * A competition of strict ranks on the most shards: most points, then the lowest tiebreak (the fastest
 * time), then whoever reached the pair first (`ties: first` beside a tiebreak: tie marks in the pair
 * order). Every item seeded with one pair, so rows differ only by their tie marks: the merge orders
 * them by mark, and each count ahead of a row is one ZLEXCOUNT over that whole run on every shard.
 */
const TIEBREAK_FIRST_BOARD = {
  ...TIEBREAK_BOARD,
  order: 'desc' as const,
  tiebreak: { order: 'asc' as const },
  ties: 'first' as const,
};

/**
 * A strict competition keeping snapshots of 1 000 rows, every item of one pair: a snapshot is its pair
 * order's first 1 000 members, each row with its mark and its rank staged for previousRank.
 */
const TIEBREAK_HISTORY_BOARD = {
  aggregate: 'max' as const,
  tiebreak: { order: 'asc' as const },
  ties: 'first' as const,
  windows: [{ name: 'h', period: '1h', interval: '1m', snapshots: { keep: 2, top: 1000 } }],
};

/**
 * A strict competition's calendar archive: a day window of the largest archive on a tiebreak board of
 * ties first, every item of one pair. Its drain takes each row as its member of the pair order (its tie
 * mark looked up, archive_lib), then trims them and writes them out with their marks and ranks.
 */
const TIEBREAK_CALENDAR_BOARD = {
  aggregate: 'max' as const,
  tiebreak: { order: 'asc' as const },
  ties: 'first' as const,
  windows: [{ name: 'day', calendar: 'day', timeZone: 'Europe/Berlin', archive: { keep: 1000, top: 10_000 } }],
};

/** Calendar windows of every kind, the largest archives. */
const CALENDAR_BOARD = {
  windows: [
    { name: 'day', calendar: 'day', timeZone: 'Europe/Berlin', archive: { keep: 1000, top: 10_000 } },
    {
      name: 'week',
      calendar: 'week',
      timeZone: 'America/New_York',
      weekStart: 'sunday',
      archive: { keep: 1000, top: 1000 },
    },
    { name: 'month', calendar: 'month', archive: { keep: 12, top: 100 } },
    { name: 'year', calendar: 'year' },
  ],
};

/** The bounded tail at its maxima on the most shards: an hour in minute slots, every closed one pruned. */
const TAIL_BOARD = {
  shards: 64,
  windows: [{ name: 'h', period: '1h', interval: '1m' }],
  tail: { exact: 1000, below: 1000 },
};

/** The bounded tail on one shard: its deepest page's 2 064 rows each looked up in every pruned slot. */
const TAIL_ONE_SHARD_BOARD = { ...TAIL_BOARD, shards: 1 };

/** The bounded tail on one shard whose items all count 2 or more a slot: pruning keeps them, packing moves them all. */
const TAIL_KEPT_BOARD = {
  shards: 1,
  windows: [{ name: 'h', period: '10m', interval: '1m' }],
  tail: { exact: 1000, below: 2 },
};

/**
 * Eight minute windows, each keeping snapshots of its 1 000 best, and segments: the first write after
 * a boundary naming 8 filled segments has 8 × 9 listings of 1 000 rows to snapshot before it applies.
 */
const CROSSING_BOARD = {
  windows: Array.from({ length: 8 }, (_, i) => ({
    name: `x${i + 1}`,
    period: `${i + 1}h`,
    interval: '1m',
    snapshots: { keep: 2, top: 1000 },
  })),
  segments: { max: 100 },
};

/**
 * Leagues at their maxima: cohorts of 1 000, 20 tiers, every member promoted; strict ties, the costlier
 * order (each mirrored league score draws a tie mark, each cohort row sheds one).
 */
const LEAGUES_BOARD = {
  windows: [{ name: 'week', calendar: 'week' }],
  ties: 'first' as const,
  leagues: {
    window: 'week',
    size: 1000,
    tiers: Array.from({ length: 20 }, (_, i) => `t${i + 1}`),
    promote: 1000,
    relegate: 1000,
  },
};

export const BOARDS = {
  /** Every option a sum board may combine, at its maximum, on one shard. */
  'wc-sum': SUM_BOARD,
  /** The same on the most shards. */
  'wc-shards': { ...SUM_BOARD, shards: 64 },
  /** Every option a sum board may combine within the write bound, segments and actors among them. */
  'wc-seg': SEGMENTED_BOARD,
  'wc-last': LAST_BOARD,
  'wc-cal': CALENDAR_BOARD,
  'wc-ever': EVER_BOARD,
  'wc-tiebreak': TIEBREAK_BOARD,
  'wc-tb-first': TIEBREAK_FIRST_BOARD,
  'wc-tb-hist': TIEBREAK_HISTORY_BOARD,
  /** Its last seeded period closed but not drained: the archive drain row drains it (read-rows.ts). */
  'wc-tb-cal': TIEBREAK_CALENDAR_BOARD,
  /** Item groups on the most shards: one group holds the head, so filtered reads scan their deepest. */
  'wc-groups': { windows: [{ name: 'm', period: '1h', interval: '1m' }], groups: true, shards: 64 },
  /** The same on one shard holding exactly the fields one span read sums: a filtered span read's deepest (seed.ts). */
  'wc-spangroups': { windows: [{ name: 'm', period: '1h', interval: '1m' }], groups: true },
  /**
   * The same with actors, its span's bound filled by slot fields and actor contributions spread over
   * every minute of the window: `minActors` over the span reads them all on each of its most calls
   * (seeded by its row, span-filter-rows.ts: its oldest slots live then).
   */
  'wc-spanactors': { windows: [{ name: 'm', period: '1h', interval: '1m' }], groups: true, actors: true },
  /**
   * The same on a competition board, every item of one score: filtered scans read the pair order, each
   * row with its mark, merged and ranked by (score, mark).
   */
  'wc-tb-groups': {
    windows: [{ name: 'm', period: '1h', interval: '1m' }],
    aggregate: 'max',
    tiebreak: { order: 'asc' },
    groups: true,
    shards: 64,
  },
  /**
   * The same on a sum board of strict ranks, every item of one score: filtered scans read the strict
   * order, each row with its tie mark, merged and ranked by (score, mark); and its decay view's
   * listing, each row's group looked up (strict-filter-rows.ts).
   */
  'wc-tf-groups': {
    windows: [{ name: 'm', period: '1h', interval: '1m' }],
    views: [{ name: 'fading', mode: 'decay', window: 'm', halfLife: '30m' }],
    ties: 'first',
    groups: true,
    shards: 64,
  },
  /**
   * Actors on one shard, every scanned row on one call: each item has one actor but the few deepest,
   * which have MIN_ACTORS.max each, so `minActors` at its maximum scans its deepest (seed.ts).
   */
  'wc-actors': {
    windows: [{ name: 'm', period: '1h', interval: '1m' }],
    views: [{ name: 'fading', mode: 'decay', window: 'm', halfLife: '30m' }],
    actors: true,
  },
  /**
   * The sum board with item groups on one shard, made to hold the most moderation a shard may: its
   * items' states (MODERATED_ITEMS_PER_SHARD) and the most moderated groups holding the most items
   * (moderation rows), so its read rows pay both at their maxima.
   */
  'wc-modgroups': { ...SUM_BOARD, groups: true },
  /** Eight metrics of eight windows each. */
  'wc-metrics': METRICS_BOARD,
  /** Eight metrics, eight wilson and controversial views. */
  'wc-rated': RATED_BOARD,
  /** The same on the most shards: an alias of an item of another shard is given there, every metric's windows first. */
  'wc-rated64': { ...RATED_BOARD, shards: 64 },
  /** Eight metrics on 64 shards: a stream's poll reads one metric's top and every row's 8 counts on each shard. */
  'wc-metrics64': { windows: [{ name: 'm', period: '1h', interval: '1m' }], metrics: METRIC_NAMES, shards: 64 },
  /** Eight metrics of the calendar board's largest archives: each metric's archives are its own. */
  'wc-metcal': { windows: CALENDAR_BOARD.windows.slice(0, 1), metrics: METRIC_NAMES },
  /** The same on the most shards: an archive row's 7 other counts are a call per shard holding its item, then one per shard. */
  'wc-metcal64': { windows: CALENDAR_BOARD.windows.slice(0, 1), metrics: METRIC_NAMES, shards: 64 },
  /**
   * The calendar board's largest archive with item groups: every seeded period's items are its own,
   * spread ones of group `a0` (seed.ts: together the most a moderated group may hold), and leave every
   * window as their day closes, so only the archived map names their group (moderation rows: a0 hidden).
   */
  'wc-calgroups': { windows: CALENDAR_BOARD.windows.slice(0, 1), groups: true },
  /** The calendar board's largest archive on 64 shards under review: every shard answers the rows not allowed ahead of a page. */
  'wc-cal64': { windows: CALENDAR_BOARD.windows.slice(0, 1), shards: 64, moderation: { review: true } },
  'wc-tail': TAIL_BOARD,
  'wc-tail-one': TAIL_ONE_SHARD_BOARD,
  'wc-tail-kept': TAIL_KEPT_BOARD,
  /** Its closed minute of items seen once (./tail-rows.ts writes them), a slot HSCAN answers whole. */
  'wc-tail-small': { ...TAIL_KEPT_BOARD, tail: { exact: 10, below: 2 } },
  'wc-cross': CROSSING_BOARD,
  /**
   * Filled to its bound of weighed actors by the weight row: the sum board's windows, views and cap,
   * without the segments every re-weighting walks (at full scale 500 steps an actor, for 1 000 actors).
   */
  'wc-weights': { windows: SUM_WINDOWS, views: SUM_VIEWS, actors: { capPerItem: CAP_PER_ITEM.max } },
  ...GROUP_BOARDS,
  /** Filled to its most aliases by the alias rows (no events: a merge of none walks the windows once). */
  'wc-aliases': { windows: SUM_WINDOWS },
  /** Leagues at their maxima: cohorts of 1 000, 20 tiers, every member promoted (league-rows.ts fills it). */
  'wc-leagues': LEAGUES_BOARD,
  /** The same leagues on the most shards (league-rows.ts seeds it: the sharded shape). */
  'wc-leagues64': { ...LEAGUES_BOARD, shards: 64 },
  /** Made, filled and reset or deleted by the admin rows (runs last). */
  'wc-gone': { ...SUM_BOARD, shards: 64 },
} as const;

export type BoardName = keyof typeof BOARDS;

/**
 * Boards whose single write (8 segments and an actor in every window and view) weighs more than a
 * default instance's WRITE_COST_PER_CALL: a default instance refuses them (400 BOARD_WRITE_TOO_COSTLY,
 * checked when seeding), so they are declared on an instance of a higher bound, as a board stored before
 * the bound was (it keeps its config and its writes): their rows measure such a board.
 */
export const PAST_WRITE_BOUND: readonly BoardName[] = ['wc-sum', 'wc-shards', 'wc-modgroups', 'wc-gone'];

/**
 * wc-modgroups' seeded groups: twice the most a board may moderate, each holding the share of
 * MODERATED_GROUP_ITEMS_PER_SHARD that the most moderated groups hold together (g0 … g99 moderated:
 * half of the head's items, spread over it).
 */
export const MODERATED_GROUP_IDS = {
  groups: 2 * MODERATED_GROUPS_PER_BOARD,
  itemsEach: MODERATED_GROUP_ITEMS_PER_SHARD / MODERATED_GROUPS_PER_BOARD,
};
