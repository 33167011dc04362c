/**
 * Worst-case row of group moderation over a segment's calendar archives (archive_held_lib's segheld,
 * issue #49): wc-seggroups keeps 1 000 archives of its 10 000 best a day, and so does each segment. Its
 * seeded items, all of one group, are segment s0's, and better ones the segment lacks fill the board's
 * archive: once the day closes the board lets the segment's items go before the segment drains its
 * day, so their groups wait in the lag map; each call writing the segment's archive rows holds their
 * items in segheld until the archive's text expires and moves their groups to the archived map.
 */
import { ARCHIVE_KEEP, ARCHIVE_TOP_ITEMS } from '../../src/ranking/options/calendar/calendar.limits';
import type { HarnessContext, HttpRequest, WorstRow } from './harness-types';
import { SEGMENT_HELD } from './held-keys';

const DAY_SEC = 86_400;
const ITEMS = ARCHIVE_TOP_ITEMS.max;
const BATCH = 200;

/** One calendar day keeping its most archives of its most rows, groups and segments. */
export const SEGMENT_GROUPS_BOARD = {
  windows: [{ name: 'day', calendar: 'day', archive: { keep: ARCHIVE_KEEP.max, top: ARCHIVE_TOP_ITEMS.max } }],
  groups: true,
  segments: { max: 100 },
};

const get = (path: string): HttpRequest => ({ method: 'GET', path });

/** ITEMS items `<prefix><n>` of `group`, scores distinct from `best` down, in the board and `segments`. */
async function fill(context: HarnessContext, prefix: string, group: string, best: number, segments: string[]) {
  for (let first = 0; first < ITEMS; first += BATCH) {
    const items = Array.from({ length: Math.min(BATCH, ITEMS - first) }, (_, k) => ({
      item: `${prefix}${first + k}`,
      amount: best - first - k,
      group,
      ...(segments.length > 0 ? { segments } : {}),
    }));
    await context.send({ method: 'POST', path: '/boards/wc-seggroups/increments', body: { items } }, 'seeder');
  }
}

/**
 * The segment's items (`<prefix><n>`) and the board's better ones, then the day's end; the board's
 * archive drained first.
 */
async function closeSegmentDay(context: HarnessContext, prefix = 'r'): Promise<void> {
  await fill(context, prefix, 'h0', ITEMS, ['s0']);
  await fill(context, 'b', 'h1', 2 * ITEMS, []);
  await context.advanceSec(DAY_SEC - (context.nowSec() % DAY_SEC) + 1);
  for (let read = 0; read < 100; read++)
    if ((await context.send(get('/boards/wc-seggroups/archives?window=day&limit=1'), 'seeder')).status === 200) return;
  throw new Error('seeding wc-seggroups: its archive never completed');
}

/**
 * The segment's archive of the first row expires (Redis' clock: its text and the keys expiring with
 * it), its items still in segheld and the archived map; then a next day of other items closes.
 */
async function closeDayAfterExpiry(context: HarnessContext): Promise<void> {
  const base = 'board:wc-seggroups}:day~s0:';
  await context.expireOnRedis(['snap:*', 'archidx:*', 'snaps', 'prev'].map((key) => base + key));
  await closeSegmentDay(context, 'q');
}

/** What each row of the segment's closed day reads and how it judges the calls. */
const SEGMENT_DAY_READ = {
  request: () => get('/boards/wc-seggroups/archives?window=day&limit=1&segment=s0'),
  // The segment's day drains, then its rows are written, over the reads; the last completes the archive.
  times: 20,
  expect: [200, 503],
  settle: async (_: HarnessContext, answer?: { status: number }) => {
    if (answer?.status !== 200) throw new Error(`the segment's archive was not complete: ${answer?.status}`);
  },
};

export const SEGMENT_ARCHIVE_GROUP_ROWS: WorstRow[] = [
  {
    route: 'GET /boards/{board}/archives',
    worst: `a segment's closed day of ${ITEMS} rows (keep ${ARCHIVE_KEEP.max}), every item let go by the board's window first and in none of its archive (the lag map): each call writing rows holds their items in segheld and moves their groups to the archived map`,
    prepare: (context) => closeSegmentDay(context),
    ...SEGMENT_DAY_READ,
    holds: SEGMENT_HELD,
    drains: `the segment's closed day drains in chunks, then its rows are written within the drain budget, up to MAX_READ_DRAIN_CALLS calls a read: a 503 WINDOW_DRAINING until the next reads or the scheduler end it; each writing call holds the items of the rows it writes`,
  },
  {
    route: 'GET /boards/{board}/archives',
    worst: `the segment's next closed day of ${ITEMS} other rows once its archive of the day before expired on Redis' clock: each call writing rows first takes out as many entries of the expired archive's ${ITEMS} items (segheld, the archived map), and a fixed number more`,
    prepare: closeDayAfterExpiry,
    ...SEGMENT_DAY_READ,
    drains: `as the row before; each writing call also takes out the entries of the expired archive's items (archive_held_lib's segment_pruned), as many as the rows it writes and PRUNED.FIXED more, in the same few commands whatever their number`,
  },
];
