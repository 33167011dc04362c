/**
 * Worst-case rows of the counters, stats, access, ingest, operations and admin board routes. The
 * destructive board rows run last (ADMIN_ROWS), on a board of their own.
 */
import { BOARD_MAX_ITEMS, WEIGHED_ACTORS_PER_BOARD } from '../../src/ranking/core/ranking.limits';
import { ACTOR_WEIGHT } from '../../src/ranking/options/actor-caps/actor-caps.option';
import { BOARDS } from './boards';
import { fill, fillAll, inWaves } from './fill';
import { statsRows } from './stats-rows';
import type { Caller, HarnessContext, HttpAnswer, HttpRequest, WorstRow } from './harness-types';

const get = (path: string): HttpRequest => ({ method: 'GET', path });
const post = (path: string, body: unknown = {}): HttpRequest => ({ method: 'POST', path, body });
const RETRACTION_POLLS = 10_000;
/** Most commands a config write dropping no window runs a shard: its options' settings, none of their maps read. */
const CONFIG_WRITE_COMMANDS = 200;
/**
 * Most commands a call of a reset of GROUPS_CONFIG_BOARD runs, whatever the board's items: the reset
 * call marks the maps (about 75 commands, most of them the options' config reads); each prune step
 * walks PRUNE_ENTRIES_PER_CALL entries in a few commands (an HSCAN, a ZMSCORE a window, an HDEL and a
 * ZREM of those no window holds, the kept listings' checks of them).
 */
const PRUNE_STEP_COMMANDS = 100;
/** Entries of one write filling GROUPS_CONFIG_BOARD. */
const GROUPS_FILL_BATCH = 500;

/**
 * Runs a retraction to its end, so no later row is charged its steps: a GET each time its runner stops
 * (a GET resumes a paused one), none while it runs (each would add its reads to the row's calls and
 * take the CPU its steps need).
 */
export async function untilDone(context: HarnessContext, board: string, answer: HttpAnswer | undefined): Promise<void> {
  const id = String(answer?.body?.id);
  const path = `/admin/boards/${board}/retractions/${id}`;
  for (let poll = 0; poll < RETRACTION_POLLS; poll++) {
    if ((await context.send(get(path), 'admin')).body?.state === 'done') return;
    await context.runSettled('retraction', board, id, 'admin');
  }
  throw new Error(
    `the retraction at ${path} never finished: ${JSON.stringify((await context.send(get(path), 'admin')).body)}`,
  );
}

/** Runs a re-weighting to its end (its steps run in the background; each GET resumes a paused one). */
async function untilWeighed(context: HarnessContext, board: string, actor: string, caller: Caller = 'admin') {
  const path = `/admin/boards/${board}/actors/${actor}`;
  for (let poll = 0; poll < RETRACTION_POLLS; poll++) {
    if ((await context.send(get(path), caller)).body?.state === 'done') return;
    await context.runSettled('weighing', board, actor, caller);
  }
  throw new Error(`the re-weighting at ${path} never finished`);
}

const weigh = (board: string, actor: string, weight: number): HttpRequest => ({
  method: 'PUT',
  path: `/admin/boards/${board}/actors/${actor}`,
  body: { weight },
});

/**
 * Weighs new actors until the board refuses one, then sets the last back to 1: the board holds one
 * weighed actor fewer than it may, whatever earlier rows weighed, and no re-weighting runs on. As the
 * operator (injected on the seeder's instance): the row measures the weighing after these.
 */
async function fillWeights(context: HarnessContext, board: string): Promise<void> {
  const full = (answer: HttpAnswer) => answer.body?.code === 'ACTOR_WEIGHTS_FULL';
  const answers = await fill(
    context,
    WEIGHED_ACTORS_PER_BOARD + 1,
    (n) => weigh(board, `wc-w${n}`, 2),
    'operator',
    full,
  );
  const wrong = answers.findIndex((answer) => answer.status !== 202 && !full(answer));
  if (wrong >= 0) throw new Error(`weighing wc-w${wrong}: ${answers[wrong].status}`);
  if (!answers.some(full)) throw new Error(`${board} took ${answers.length} weighed actors without a refusal`);
  const weighed = answers.flatMap((answer, n) => (full(answer) ? [] : [`wc-w${n}`]));
  await context.send(weigh(board, weighed[weighed.length - 1], 1), 'operator');
  await inWaves(weighed.length, (n) => untilWeighed(context, board, weighed[n], 'operator'));
}

/**
 * Weeks the board of every option stands idle before each of its admin step rows: every window but the
 * longest expires, and each snapshot and segment boundary is crossed, in the step's first call.
 */
const IDLE_WEEKS = 2;
const STEPS_TO_THE_END =
  'the retraction runs to its end in steps of at most adminStepUnits units, each a call of its own';
const DROP_TO_THE_END =
  "the board's keys drop in the background in steps of at most BOARD_DROP_KEYS_PER_CALL keys, each a call of its own; later rows are not charged them";
const idle = (context: HarnessContext) => context.advanceSec(IDLE_WEEKS * 7 * 86_400);

const fresh = (attempt: number) => `f${Date.now().toString(36)}${attempt}`;

/** A one-shard board with item groups, made and deleted by its row: each of its items in the groups map. */
const GROUPS_CONFIG_BOARD = 'wc-cfggroups';
const groupsConfig = () => ({ windows: [{ name: 'm', period: '1h', interval: '1m' }], groups: true });

/** Creates GROUPS_CONFIG_BOARD and writes the sum boards' count of items into it, each in one of 100 groups. */
async function fillGroupsBoard(context: HarnessContext): Promise<void> {
  await context.send({ method: 'PUT', path: `/admin/boards/${GROUPS_CONFIG_BOARD}`, body: groupsConfig() }, 'admin');
  const { items } = context.sizes;
  for (let first = 0; first < items; first += GROUPS_FILL_BATCH) {
    const entries = Array.from({ length: Math.min(GROUPS_FILL_BATCH, items - first) }, (_, k) => ({
      item: `i${first + k}`,
      amount: 1,
      group: `g${(first + k) % 100}`,
    }));
    const answer = await context.send(post(`/boards/${GROUPS_CONFIG_BOARD}/increments`, { items: entries }), 'seeder');
    if (answer.status !== 200) throw new Error(`filling ${GROUPS_CONFIG_BOARD}: ${answer.status}`);
  }
}

/** fillGroupsBoard, then 1 KB of data on each of its items. */
async function fillGroupsBoardWithData(context: HarnessContext): Promise<void> {
  await fillGroupsBoard(context);
  const blob = 'x'.repeat(1012);
  const data = (n: number): HttpRequest => ({
    method: 'PUT',
    path: `/boards/${GROUPS_CONFIG_BOARD}/items/i${n}/data`,
    body: { blob },
  });
  await fillAll(context, context.sizes.items, data, 'seeder');
}

/** A row of a config write (`query`, `change`) of GROUPS_CONFIG_BOARD filled by its prepare, deleted after. */
function groupsConfigRow(
  worst: string,
  query: string,
  change: object,
  callCommands: { most: number; why: string },
  prepare = fillGroupsBoard,
): WorstRow {
  return {
    route: 'PUT /admin/boards/{board}',
    worst,
    prepare,
    settle: async (context) => {
      await context.send({ method: 'DELETE', path: `/admin/boards/${GROUPS_CONFIG_BOARD}` }, 'admin');
      await context.dropsSettled();
    },
    request: () => ({
      method: 'PUT',
      path: `/admin/boards/${GROUPS_CONFIG_BOARD}${query}`,
      body: { ...groupsConfig(), ...change },
    }),
    expect: [200],
    times: 1,
    callCommands,
  };
}

async function seedCounters(context: HarnessContext): Promise<void> {
  for (let n = 0; n < 120; n++)
    await context.send(post('/counters/wc-hits/increment', { count: 1, at: context.nowSec() - n }), 'seeder');
}

export const SERVICE_ROWS: WorstRow[] = [
  {
    route: 'POST /counters/{name}/increment',
    worst: 'a new counter, every precision',
    request: (_context, attempt) => post(`/counters/wc-${fresh(attempt)}/increment`, { count: 5 }),
    grows: { times: 40 },
  },
  {
    route: 'GET /counters/{name}',
    worst: 'precision 1 s, every sample, filled',
    prepare: seedCounters,
    request: () => get('/counters/wc-hits?precision=1&fill=true'),
  },
  { route: 'GET /counters', worst: 'a page of 1 000 names', request: () => get('/counters?limit=1000') },
  {
    route: 'DELETE /admin/counters/{name}',
    worst: 'a counter at every precision',
    request: () => ({ method: 'DELETE', path: '/admin/counters/wc-hits' }),
    expect: [204, 404],
    times: 1,
  },
  ...statsRows(fresh),
  {
    route: 'POST /admin/keys',
    worst: 'a key with every scope and prefix',
    request: (context, attempt) => {
      context.state.set('key', `wc-key-${attempt}`);
      return post('/admin/keys', { name: `wc-key-${attempt}`, scopes: ['read', 'write'], prefixes: ['wc-'] });
    },
    expect: [201],
    times: 1,
  },
  { route: 'GET /admin/keys', worst: 'every stored key', request: () => get('/admin/keys') },
  {
    route: 'DELETE /admin/keys/{name}',
    worst: 'a stored key',
    request: (context) => ({ method: 'DELETE', path: `/admin/keys/${context.state.get('key')}` }),
    expect: [204],
    times: 1,
  },
  {
    route: 'PUT /admin/ingest/{name}',
    worst: 'a Redis Streams source on this Redis',
    request: () => ({
      method: 'PUT',
      path: '/admin/ingest/wc-source',
      body: { kind: 'redis-stream', stream: 'wc-events', board: 'wc-sum' },
    }),
    expect: [200, 201],
    times: 1,
  },
  { route: 'GET /admin/ingest', worst: 'every source with its progress', request: () => get('/admin/ingest') },
  {
    route: 'DELETE /admin/ingest/{name}',
    worst: 'a running source',
    request: () => ({ method: 'DELETE', path: '/admin/ingest/wc-source' }),
    expect: [204],
    times: 1,
  },
  { route: 'GET /dashboard', worst: 'the page', request: () => get('/dashboard') },
  { route: 'GET /health/live', worst: 'the liveness probe', request: () => get('/health/live') },
  {
    route: 'GET /health/ready',
    worst: 'the readiness probe (a Redis round trip)',
    request: () => get('/health/ready'),
  },
  { route: 'GET /metrics', worst: 'every metric', request: () => get('/metrics') },
  { route: 'GET /admin/metrics/local', worst: 'every route', request: () => get('/admin/metrics/local') },
  {
    route: 'PUT /admin/boards/{board}/actors/{actor}',
    worst: `the last weighed actor a board takes (${WEIGHED_ACTORS_PER_BOARD}), then one more: refused, nothing stored`,
    prepare: (context) => fillWeights(context, 'wc-weights'),
    request: (_context, attempt) => weigh('wc-weights', `wc-full-${attempt}`, ACTOR_WEIGHT.max),
    settle: (context) => untilWeighed(context, 'wc-weights', 'wc-full-0'),
    grows: { times: 2, refusal: 'ACTOR_WEIGHTS_FULL' },
  },
];

const FULL_SNAPSHOT_ITEMS = 1200;

/**
 * The 64-shard board's window of 1 000-row snapshots listing more rows than it keeps over its shards at
 * its next boundary: every shard holds a share of 1 200 items, and a write to each crosses the boundary.
 */
async function fullSnapshot(context: HarnessContext): Promise<void> {
  const batch = (first: number, count: number, amount: (n: number) => number) =>
    post('/boards/wc-shards/increments', {
      items: Array.from({ length: count }, (_, k) => ({ item: `i${first + k}`, amount: amount(first + k) })),
    });
  await context.advanceSec(60);
  for (let first = 0; first < FULL_SNAPSHOT_ITEMS; first += 200)
    await context.send(
      batch(first, 200, (n) => FULL_SNAPSHOT_ITEMS - n),
      'seeder',
    );
  await context.advanceSec(60);
  for (let first = 0; first < FULL_SNAPSHOT_ITEMS; first += 200)
    await context.send(
      batch(first, 200, () => 1),
      'seeder',
    );
}

/**
 * Run last: they reset and delete a 64-shard board of every option, filled like the others, then
 * retract and re-weigh on the board of every option after it stood idle (each run to its end, so no
 * later row is charged its steps).
 */
export const ADMIN_ROWS: WorstRow[] = [
  {
    route: 'POST /admin/boards/{board}/retractions',
    worst:
      "an item of a 64-shard board whose snapshot holds 1 200 rows: each shard's snapshots listing it cut to the board's 1 000 rows first",
    prepare: fullSnapshot,
    request: () => post('/admin/boards/wc-shards/retractions', { item: 'i4' }),
    settle: (context, answer) => untilDone(context, 'wc-shards', answer),
    measuresSettle: true,
    expect: [202],
    times: 1,
    manyCalls: STEPS_TO_THE_END,
  },
  {
    route: 'POST /admin/boards/{board}/retractions',
    worst:
      "an item of every metric of an 8-metric board: 8 windows each, 6 views, the last metric's snapshots of 1 000 rows",
    request: () => post('/admin/boards/wc-metrics/retractions', { item: 'i1' }),
    settle: (context, answer) => untilDone(context, 'wc-metrics', answer),
    measuresSettle: true,
    expect: [202],
    times: 1,
    manyCalls: STEPS_TO_THE_END,
  },
  {
    route: 'GET /admin/boards/{board}/retractions/{id}',
    worst: "a running item retraction's step on an 8-metric board (every metric's windows, views and snapshots)",
    prepare: async (context) => {
      const started = await context.send(post('/admin/boards/wc-metrics/retractions', { item: 'i2' }), 'admin');
      context.state.set('metrics-retraction', String(started.body?.id));
    },
    request: (context) => get(`/admin/boards/wc-metrics/retractions/${context.state.get('metrics-retraction')}`),
    settle: (context) =>
      untilDone(context, 'wc-metrics', { status: 200, body: { id: context.state.get('metrics-retraction') } }),
  },
  groupsConfigRow(
    'a change dropping no window (maxItems set) of a one-shard board with item groups holding the items of the sum boards, each in its group map',
    '',
    { maxItems: BOARD_MAX_ITEMS.max },
    {
      most: CONFIG_WRITE_COMMANDS,
      why: 'a write dropping no window reads no entry of the groups maps (each item read was 2 commands here)',
    },
  ),
  groupsConfigRow(
    "the same board's reset dropping its window: every item leaves the groups map, in prune steps after the reset call",
    '?reset=true',
    { windows: [{ name: 'm', period: '2h', interval: '1m' }] },
    {
      most: PRUNE_STEP_COMMANDS,
      why: 'a reset only marks the groups maps; prune steps walk them after it, PRUNE_ENTRIES_PER_CALL entries a call (a call of the whole map ran about 12 commands a 1 000 entries, ~1 000-2 800 at 100 000 items)',
    },
  ),
  groupsConfigRow(
    'the same reset with 1 KB of data on every item: every item leaves the groups map and loses its data, in prune steps',
    '?reset=true',
    { windows: [{ name: 'm', period: '2h', interval: '1m' }] },
    {
      most: PRUNE_STEP_COMMANDS,
      why: 'the item data is walked by prune steps too, 50 entries (about 50 KB of data read) a call; the reset call itself reads no entry',
    },
    fillGroupsBoardWithData,
  ),
  {
    route: 'PUT /admin/boards/{board}',
    worst: "a reset of a filled 64-shard board of every option, then its old keys' drop to the end",
    request: () => ({ method: 'PUT', path: '/admin/boards/wc-gone?reset=true', body: BOARDS['wc-gone'] }),
    settle: (context) => context.dropsSettled(),
    measuresSettle: true,
    expect: [200, 201],
    times: 1,
    manyCalls: DROP_TO_THE_END,
  },
  {
    route: 'DELETE /admin/boards/{board}',
    worst: 'a filled 64-shard board of every option, then its drop to the end',
    request: () => ({ method: 'DELETE', path: '/admin/boards/wc-shards' }),
    settle: (context) => context.dropsSettled(),
    measuresSettle: true,
    expect: [204],
    times: 1,
    manyCalls: DROP_TO_THE_END,
  },
  {
    route: 'PUT /admin/boards/{board}/actors/{actor}',
    worst: `an actor's events in 8 windows, 8 views and its segments of a capped board, after ${IDLE_WEEKS} idle weeks: the first step, then each step at its bound (adminStepUnits) to the end`,
    prepare: idle,
    request: () => ({ method: 'PUT', path: '/admin/boards/wc-sum/actors/a2', body: { weight: 100 } }),
    settle: (context) => untilWeighed(context, 'wc-sum', 'a2'),
    measuresSettle: true,
    expect: [202],
    times: 1,
    manyCalls: 'the re-weighting runs to its end in steps of at most adminStepUnits units, each a call of its own',
  },
  {
    route: 'POST /admin/boards/{board}/retractions',
    worst: `an actor's events in 8 windows, 8 views and its segments, with a 400-day block, after ${IDLE_WEEKS} idle weeks: the first step, then each step to the end`,
    prepare: idle,
    request: () => post('/admin/boards/wc-sum/retractions', { actor: 'a1', block: '400d' }),
    settle: (context, answer) => untilDone(context, 'wc-sum', answer),
    measuresSettle: true,
    expect: [202],
    times: 1,
    manyCalls: STEPS_TO_THE_END,
  },
  {
    route: 'GET /admin/boards/{board}/actors/{actor}',
    worst: "a running re-weighting's progress (a step of work)",
    prepare: async (context) => {
      await context.send({ method: 'PUT', path: '/admin/boards/wc-sum/actors/a5', body: { weight: 0 } }, 'admin');
    },
    request: () => get('/admin/boards/wc-sum/actors/a5'),
  },
  {
    route: 'GET /admin/boards/{board}/retractions/{id}',
    worst: "a running retraction's progress (a step of work)",
    prepare: async (context) => {
      const started = await context.send(post('/admin/boards/wc-sum/retractions', { item: 'i3' }), 'admin');
      context.state.set('retraction', String(started.body?.id));
    },
    request: (context) => get(`/admin/boards/wc-sum/retractions/${context.state.get('retraction')}`),
  },
];
