/**
 * Fills the harness's boards through the HTTP API (as the seeder, a client of its own whose quotas are
 * out of reach), so every row meets data at the scale's size: closed calendar periods with archives,
 * snapshots, actors and segments on the sum boards, values in every slot of the `last` board.
 */
import {
  MAX_READ_DRAIN_CALLS,
  MIN_ACTORS,
  MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD,
  SPAN_MAX_FIELDS,
} from '../../src/ranking/core/ranking.limits';
import { shardOf } from '../../src/ranking/core/shard-math';
import { RATED64_MERGE } from './alias-rows';
import { BOARDS, type BoardName, METRIC_NAMES, MODERATED_GROUP_IDS, PAST_WRITE_BOUND } from './boards';

/** The last of the metrics boards' metrics: the one the history and archive rows read. */
const LAST = METRIC_NAMES[METRIC_NAMES.length - 1];
import type { HarnessContext } from './harness-types';
import type { RedisMeter } from './redis-meter';
import { loggedStep } from './seed-log';

const DAY_SEC = 86_400;
const MINUTE_SEC = 60;
/** Entries per seeding batch: below any per-call cost bound, whatever the board's options. */
const SEED_BATCH = 200;
/**
 * Seeding steps of boards of their own run at once (together): two keep Redis busy while this process
 * builds the next request, and a seeding call waits behind one other at most (REDIS_COMMAND_TIMEOUT_MS).
 */
const SEEDING_IN_FLIGHT = 2;
/**
 * Reads that drain the closed periods before one answers: each drains at most MAX_READ_DRAIN_CALLS chunks
 * of EXPIRE_CHUNK (100) fields, and a metric board holds a window a metric, each of a period's rows per
 * closed period: twice that many fields' worth of reads (2 000 at least; the full scale's 100 periods of
 * 10 000 rows took more than 2 000).
 */
const drainReads = ({ periods, periodRows }: { periods: number; periodRows: number }) =>
  Math.max(2_000, Math.ceil((2 * periods * periodRows * METRIC_NAMES.length) / (MAX_READ_DRAIN_CALLS * 100)));
const LAST_ITEMS = 50;
/** Items of the actors board with MIN_ACTORS.max distinct actors (minActors' worst case: few qualify). */
const QUALIFYING = 3;

async function must(what: string, answer: Promise<{ status: number; body: unknown }>) {
  const { status, body } = await answer;
  if (status >= 300) throw new Error(`seeding ${what}: ${status} ${JSON.stringify(body)}`);
}

export async function batches(context: HarnessContext, board: BoardName, count: number, entry: (n: number) => object) {
  for (let first = 0; first < count; first += SEED_BATCH) {
    const items = Array.from({ length: Math.min(SEED_BATCH, count - first) }, (_, k) => entry(first + k));
    await must(board, context.send({ method: 'POST', path: `/boards/${board}/increments`, body: { items } }, 'seeder'));
  }
}

const ARCHIVED_ITEMS = MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD;

/**
 * wc-calgroups' rows a period: enough for ARCHIVED_ITEMS rows of group a0 over the seeded periods at
 * every other row (at ci scale more than `periodRows`).
 */
export const archivedGroupRows = (context: HarnessContext): number =>
  Math.max(context.sizes.periodRows, 2 * Math.ceil(ARCHIVED_ITEMS / context.sizes.periods));

/** wc-calgroups' items of group a0 in `period`: together exactly ARCHIVED_ITEMS over the seeded periods. */
export const archivedGroupItems = (context: HarnessContext, period: number): number => {
  const { periods } = context.sizes;
  return Math.floor(((period + 1) * ARCHIVED_ITEMS) / periods) - Math.floor((period * ARCHIVED_ITEMS) / periods);
};

/**
 * The group of wc-calgroups' row `n` of `period`: a0 for its archivedGroupItems, spread over the period
 * (at most every other row); the probe group a2 for row 1 of the first period (checkArchivedGroup); else a1.
 */
function archivedGroupOf(context: HarnessContext, period: number, n: number): string {
  const count = archivedGroupItems(context, period);
  const step = Math.max(2, Math.floor(archivedGroupRows(context) / count));
  if (n % step === 0 && n / step < count) return 'a0';
  return period === 0 && n === 1 ? 'a2' : 'a1';
}

/**
 * Fails unless group a0 holds exactly ARCHIVED_ITEMS archived items, as the archived rows' texts say:
 * with the probe group a2 (one archived item) hidden, hiding a0 is refused for one item more than that
 * (the refusal names the count). a2 is cleared again.
 */
async function checkArchivedGroup(context: HarnessContext): Promise<void> {
  const path = (group: string) => `/admin/boards/wc-calgroups/moderation/groups/${group}`;
  await must('wc-calgroups a2', context.send({ method: 'PUT', path: path('a2'), body: { state: 'hidden' } }, 'admin'));
  const a0 = await context.send({ method: 'PUT', path: path('a0'), body: { state: 'hidden' } }, 'admin');
  await must('wc-calgroups a2', context.send({ method: 'DELETE', path: path('a2') }, 'admin'));
  const held = `would hold ${ARCHIVED_ITEMS + 1} archived items`;
  if (a0.status !== 422 || !String(a0.body?.message).includes(held))
    throw new Error(
      `seeding wc-calgroups: group a0 does not hold ${ARCHIVED_ITEMS} archived items (with a2: ${a0.status} ${JSON.stringify(a0.body)})`,
    );
}

/**
 * Closed periods of the calendar board, each with `periodRows` rows kept in its archive (wc-calgroups:
 * archivedGroupRows); the strict competition's last period holds `periodRows` items of one pair, closed
 * and left to drain.
 */
async function seedCalendar(context: HarnessContext, meter?: RedisMeter): Promise<void> {
  const { periods, periodRows } = context.sizes;
  for (let period = 0; period < periods; period++)
    await loggedStep(meter, `calendar period ${period}`, async () => {
      const rows = archivedGroupRows(context);
      await together([
        ...(['wc-cal', 'wc-cal64'] as const).map(
          (board) => () => batches(context, board, periodRows, (n) => ({ item: `c${n}`, amount: periodRows - n })),
        ),
        // Every metric's archive holds every item (each row's counts are found in all 8 records).
        ...(['wc-metcal', 'wc-metcal64'] as const).map((board) => async () => {
          for (const metric of METRIC_NAMES)
            await batches(context, board, periodRows, (n) => ({ item: `c${n}`, amount: periodRows - n, metric }));
        }),
        async () => {
          if (period === periods - 1)
            await batches(context, 'wc-tb-cal', periodRows, (n) => ({ item: `c${n}`, score: 7, tiebreak: 0 }));
        },
        () =>
          batches(context, 'wc-calgroups', rows, (n) => ({
            ...{ item: `p${period}c${n}`, amount: rows - n },
            group: archivedGroupOf(context, period, n),
          })),
      ]);
      await context.advanceSec(DAY_SEC);
    });
  await loggedStep(meter, 'calendar drains', () => drainCalendars(context));
  await checkArchivedGroup(context);
}

/**
 * Every calendar board's day window (each metric's) drained by reads of its top row first: an archive
 * read drains as much a call but also reads a period's rows (and each of them in the 7 other metrics,
 * which drain only once its own is done); at full size the seeder's CPU, not Redis's, then bounded the
 * drain (about 1 s a read). The archive reads follow.
 */
async function drainCalendars(context: HarnessContext): Promise<void> {
  const windows = [
    ...['wc-cal', 'wc-cal64', 'wc-calgroups'].map((board) => `/boards/${board}/%s?window=day&limit=1`),
    ...['wc-metcal', 'wc-metcal64'].flatMap((board) =>
      METRIC_NAMES.map((metric) => `/boards/${board}/%s?window=day&limit=1&metric=${metric}`),
    ),
  ];
  for (const window of windows) await drained(context, window.replace('%s', 'top'));
  for (const window of windows) await drained(context, window.replace('%s', 'archives'));
}

/** Reads `path` until it answers 200: its window's closed periods drained and their archives written. */
export async function drained(context: HarnessContext, path: string): Promise<void> {
  for (let read = 0, most = drainReads(context.sizes); read < most; read++) {
    const answer = await context.send({ method: 'GET', path }, 'seeder');
    if (answer.status === 200) return;
  }
  throw new Error(`seeding ${path}: the closed periods never finished draining`);
}

/** Items in descending order (i0 the top), each with an actor and a segment; then snapshot boundaries. */
async function seedSums(context: HarnessContext, board: BoardName): Promise<void> {
  const { items, actors, segments } = context.sizes;
  await batches(context, board, items, (n) => ({
    item: `i${n}`,
    amount: items - n,
    actor: `a${n % actors}`,
    segments: [`s${n % segments}`],
  }));
}

/** The head of the groups board in one group (`g0`), then one item in each of 100 more groups. */
async function seedGroups(context: HarnessContext): Promise<void> {
  const { items } = context.sizes;
  await batches(context, 'wc-groups', items, (n) => ({
    item: `i${n}`,
    amount: items - n,
    group: n < items - 100 ? 'g0' : `g${items - n}`,
  }));
}

/**
 * SPAN_MAX_FIELDS items (whatever the scale: the bound one span read sums), one field each, their head
 * in one group, the last 100 in a group each: a filtered span read sums and scans all of them.
 */
async function seedSpanGroups(context: HarnessContext): Promise<void> {
  await batches(context, 'wc-spangroups', SPAN_MAX_FIELDS, (n) => ({
    item: `i${n}`,
    amount: SPAN_MAX_FIELDS - n,
    group: n < SPAN_MAX_FIELDS - 100 ? 'g0' : `g${SPAN_MAX_FIELDS - n}`,
  }));
}

/** The competition board's items as the groups board's, all of one score: their tiebreaks order them. */
async function seedTiebreakGroups(context: HarnessContext): Promise<void> {
  const { items } = context.sizes;
  await batches(context, 'wc-tb-groups', items, (n) => ({
    item: `i${n}`,
    score: 7,
    tiebreak: n,
    group: n < items - 100 ? 'g0' : `g${items - n}`,
  }));
}

/** The groups board's items on the strict board, all of one score: the order they reached it ranks them. */
async function seedStrictGroups(context: HarnessContext): Promise<void> {
  const { items } = context.sizes;
  await batches(context, 'wc-tf-groups', items, (n) => ({
    item: `i${n}`,
    amount: 7,
    group: n < items - 100 ? 'g0' : `g${items - n}`,
  }));
}

/**
 * Items in descending order on the actors board, each with one actor; then the lowest QUALIFYING items
 * each get MIN_ACTORS.max actors more (amount 1 each: they stay deep in the listing).
 */
async function seedActors(context: HarnessContext): Promise<void> {
  const { items } = context.sizes;
  await batches(context, 'wc-actors', items, (n) => ({ item: `i${n}`, amount: items - n, actor: `a${n}` }));
  await batches(context, 'wc-actors', QUALIFYING * MIN_ACTORS.max, (n) => ({
    item: `i${items - 1 - (n % QUALIFYING)}`,
    amount: 1,
    actor: `m${Math.floor(n / QUALIFYING)}`,
  }));
}

/** The sum board's items, the head's in MODERATED_GROUP_IDS' groups (taking turns), the rest in one more. */
async function seedModeratedGroups(context: HarnessContext): Promise<void> {
  const { items, actors, segments } = context.sizes;
  const { groups, itemsEach } = MODERATED_GROUP_IDS;
  await batches(context, 'wc-modgroups', items, (n) => ({
    item: `i${n}`,
    amount: items - n,
    actor: `a${n % actors}`,
    segments: [`s${n % segments}`],
    group: n < groups * itemsEach ? `g${n % groups}` : 'rest',
  }));
}

async function seedSnapshots(context: HarnessContext, sums: readonly BoardName[]): Promise<void> {
  for (let boundary = 0; boundary < context.sizes.snapshots; boundary++) {
    await context.advanceSec(MINUTE_SEC);
    for (const board of sums.filter((name) => name !== 'wc-seg'))
      await batches(context, board, 8, (n) => ({ item: `i${n}`, amount: 1, actor: 'a0', segments: ['s0'] }));
    // The last metric's window crosses its boundaries on that metric's calls (its seeded items: seedMetrics).
    await batches(context, 'wc-metrics', 8, (n) => ({ item: `i${n}`, amount: 1, metric: LAST }));
    // A slot of the tail board per minute, closed (and pruned) by the next.
    for (const board of ['wc-tail', 'wc-tail-one'] as const)
      await batches(context, board, context.sizes.items, (n) => ({ item: `i${n}`, amount: 1 + (n % 3) }));
  }
  // More boundaries than the tail boards' hour (full size: 100) leave their first slots expired: drained here,
  // so their rows read a drained window (the drain has rows of its own).
  for (const board of ['wc-tail', 'wc-tail-one']) await drained(context, `/boards/${board}/top?window=h&limit=1`);
}

/** Every one of LAST_ITEMS items holds a score in each of the newest `lastSlots` one-minute slots. */
async function seedLast(context: HarnessContext): Promise<void> {
  const nowSec = context.nowSec();
  await batches(context, 'wc-last', LAST_ITEMS * context.sizes.lastSlots, (n) => ({
    item: `l${n % LAST_ITEMS}`,
    score: 1 + (n % 997),
    at: nowSec - Math.floor(n / LAST_ITEMS) * MINUTE_SEC,
  }));
}

/** The crossing board's 8 segments, each holding every item (at least the 1 000 a snapshot keeps). */
async function seedCrossing(context: HarnessContext): Promise<void> {
  const segments = Array.from({ length: 8 }, (_, k) => `x${k}`);
  const items = Math.max(1000, Math.min(context.sizes.items, 1500));
  await batches(context, 'wc-cross', items, (n) => ({ item: `i${n}`, amount: items - n, segments }));
}

/** Items of the all-time board, each scored years ago: only its all-time window holds them. */
async function seedEver(context: HarnessContext): Promise<void> {
  const atSec = context.nowSec() - 5 * 365 * DAY_SEC;
  await batches(context, 'wc-ever', context.sizes.items, (n) => ({ item: `e${n}`, score: n, at: atSec }));
}

/** Items of the tiebreak board: one score, each its own tiebreak (one run of equal scores per shard). */
async function seedTiebreak(context: HarnessContext): Promise<void> {
  await batches(context, 'wc-tiebreak', context.sizes.items, (n) => ({ item: `t${n}`, score: 7, tiebreak: n }));
}

/** Items of the strict competition board: one pair for all (one run of equal pairs per shard). */
async function seedTiebreakFirst(context: HarnessContext): Promise<void> {
  await batches(context, 'wc-tb-first', context.sizes.items, (n) => ({ item: `t${n}`, score: 7, tiebreak: 0 }));
}

/** Items of the strict competition keeping snapshots: one pair for all, at least the 1 000 a snapshot keeps. */
async function seedTiebreakHistory(context: HarnessContext): Promise<void> {
  const items = Math.max(1000, Math.min(context.sizes.items, 1500));
  await batches(context, 'wc-tb-hist', items, (n) => ({ item: `h${n}`, score: 7, tiebreak: 0 }));
}

/** The metrics board whose snapshots its last metric's reads meet, filled before the snapshot boundaries. */
const SNAPSHOT_METRIC_BOARDS = ['wc-metrics'] as const;

/**
 * Items in descending order in each metric of the metrics boards (a batch names one metric); only
 * those `kept`, each with the amount it has among all.
 */
async function seedMetrics(
  context: HarnessContext,
  boards: readonly BoardName[],
  kept: (item: string) => boolean = () => true,
): Promise<void> {
  const { items } = context.sizes;
  const seeded = Array.from({ length: items }, (_, n) => n).filter((n) => kept(`i${n}`));
  for (const board of boards)
    for (const metric of METRIC_NAMES)
      await batches(context, board, seeded.length, (k) => ({
        item: `i${seeded[k]}`,
        amount: items - seeded[k],
        metric,
      }));
}

/** wc-rated64's shards its alias row merges on: all its row reads or writes, as the whole seeding leaves them. */
const onMergedShards = (item: string): boolean => {
  const { shards } = BOARDS['wc-rated64'];
  return [RATED64_MERGE.alias, RATED64_MERGE.item].some((merged) => shardOf(merged, shards) === shardOf(item, shards));
};

/** A board as the admin declares it; one past the write bound refused so, then stored by the operator. */
export async function declare(context: HarnessContext, name: BoardName, body: object): Promise<void> {
  const put = { method: 'PUT' as const, path: `/admin/boards/${name}`, body };
  if (!PAST_WRITE_BOUND.includes(name)) return must(name, context.send(put, 'admin'));
  const refused = await context.send(put, 'admin');
  if (refused.status !== 400 || refused.body?.code !== 'BOARD_WRITE_TOO_COSTLY')
    throw new Error(`seeding ${name}: a default instance answered ${refused.status}, not BOARD_WRITE_TOO_COSTLY`);
  await must(name, context.send(put, 'operator'));
}

/**
 * Steps run SEEDING_IN_FLIGHT at a time, each after the one before it in its lane. Only steps on boards
 * of their own at one clock time: a board's state is its own writes at the clock's time, whatever other
 * boards' writes land between them; a lane's next request is ready while Redis runs the other's.
 */
async function together(steps: ReadonlyArray<() => Promise<unknown>>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < steps.length) await steps[next++]();
  };
  await Promise.all(Array.from({ length: SEEDING_IN_FLIGHT }, lane));
}

export async function seedBoards(context: HarnessContext, meter?: RedisMeter): Promise<void> {
  const step = (name: string, work: () => Promise<unknown>) => loggedStep(meter, name, work);
  await step('declare', async () => {
    for (const [name, body] of Object.entries(BOARDS)) await declare(context, name as BoardName, body);
  });
  await step('calendar', () => seedCalendar(context, meter));
  // wc-gone has wc-shards' options and gets its writes at the same times: copied from it where Redis can.
  const { copyBoard } = context;
  const sums = (['wc-sum', 'wc-shards', 'wc-gone', 'wc-seg'] as const).filter(
    (board) => board !== 'wc-gone' || !copyBoard,
  );
  await step('boards before the snapshot boundaries', () =>
    together([
      ...sums.map((board) => () => seedSums(context, board)),
      () => seedModeratedGroups(context),
      () => seedMetrics(context, SNAPSHOT_METRIC_BOARDS),
    ]),
  );
  await step('snapshots', () => seedSnapshots(context, sums));
  if (copyBoard) await step('wc-gone as wc-shards', () => copyBoard('wc-shards', 'wc-gone'));
  await step('boards after them', () =>
    together([
      // The hour of wc-actors and of the groups boards is live at their rows whatever the boundaries before
      // took (full size: 100 minutes): seeded before them, their rows' calls drained the expired hour instead.
      ...[seedLast, seedEver, seedTiebreak, seedTiebreakFirst, seedTiebreakHistory, seedActors].map(
        (seed) => () => seed(context),
      ),
      ...[seedGroups, seedSpanGroups, seedTiebreakGroups, seedStrictGroups].map((seed) => () => seed(context)),
      () => seedMetrics(context, ['wc-rated']),
      () => seedMetrics(context, ['wc-metrics64']),
      () => seedMetrics(context, ['wc-rated64'], onMergedShards),
      () => seedCrossing(context),
      // The tail rows close its one slot (tail-rows.ts).
      () => batches(context, 'wc-tail-kept', context.sizes.items, (n) => ({ item: `i${n}`, amount: 2 + (n % 3) })),
    ]),
  );
}
