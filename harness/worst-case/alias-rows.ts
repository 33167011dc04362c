/**
 * Worst-case rows of aliases (PUT/GET /admin/boards/:board/aliases/:alias): a seeded item of the sum
 * board named an alias of another, its live events in 8 windows, 8 views and its segments of a capped
 * board, merged on one shard (each take gives its chunk in the same call: the costliest call) and
 * across shards of the 64-shard board (a take, then a give on the canonical item's shard); a seeded
 * item of the 8-metric boards merged in every metric (each metric's windows, drained and crossed first:
 * the last metric's snapshots; and the 8 wilson / controversial views reading them), on one shard and
 * across shards of the 64-shard one (the give drains and crosses every metric's windows of the
 * canonical item's shard first); and a board filled to its most aliases, then one more, refused.
 */
import { ALIASES_PER_BOARD } from '../../src/ranking/core/ranking.limits';
import { fill } from './fill';
import type { HarnessContext, HttpAnswer, HttpRequest, WorstRow } from './harness-types';

const ALIAS_POLLS = 100_000;
const FILLED = 'wc-aliases';

/**
 * wc-rated64's merge: items of two shards. Only they and the items sharing their shards are seeded
 * there (seed.ts): the merge reads and writes those shards alone.
 */
export const RATED64_MERGE = { alias: 'i3', item: 'i4' };

const name = (board: string, alias: string, item: string): HttpRequest => ({
  method: 'PUT',
  path: `/admin/boards/${board}/aliases/${alias}`,
  body: { item },
});
const progress = (board: string, alias: string): HttpRequest => ({
  method: 'GET',
  path: `/admin/boards/${board}/aliases/${alias}`,
});

/** Runs a merge to its end (its steps run in the background; each GET resumes a paused one). */
async function untilMerged(context: HarnessContext, board: string, alias: string): Promise<void> {
  for (let poll = 0; poll < ALIAS_POLLS; poll++) {
    if ((await context.send(progress(board, alias), 'admin')).body?.state === 'done') return;
    await context.runSettled('merge', board, alias, 'admin');
  }
  throw new Error(`the merge of alias ${alias} on ${board} never finished`);
}

/** Names aliases of no events until the board refuses one: it then holds its most (the operator fills it). */
async function fillAliases(context: HarnessContext): Promise<void> {
  const full = (answer: HttpAnswer) => answer.body?.code === 'ALIASES_FULL';
  const answers = await fill(context, ALIASES_PER_BOARD + 1, (n) => name(FILLED, `wc-a${n}`, 'i0'), 'operator', full);
  const wrong = answers.findIndex((answer) => answer.status !== 202 && !full(answer));
  if (wrong >= 0) throw new Error(`naming wc-a${wrong}: ${answers[wrong].status}`);
  if (!answers.some(full)) throw new Error(`${FILLED} took ${answers.length} aliases without a refusal`);
}

export const ALIAS_ROWS: WorstRow[] = [
  {
    route: 'PUT /admin/boards/{board}/aliases/{alias}',
    worst:
      'a seeded item of the one-shard sum board named an alias of the top item: the first take, giving its chunk in the same call (8 windows, 8 views, segments, capped actors)',
    request: () => name('wc-sum', 'i1', 'i0'),
    settle: (context) => untilMerged(context, 'wc-sum', 'i1'),
    expect: [202],
    times: 1,
  },
  {
    route: 'GET /admin/boards/{board}/aliases/{alias}',
    worst: "a running merge's progress (the record, the map, and a step resumed)",
    prepare: async (context) => {
      await context.send(name('wc-sum', 'i3', 'i2'), 'admin');
    },
    request: () => progress('wc-sum', 'i3'),
    settle: (context) => untilMerged(context, 'wc-sum', 'i3'),
  },
  {
    route: 'PUT /admin/boards/{board}/aliases/{alias}',
    worst: 'a seeded item of the 64-shard sum board named an alias of an item of another shard: a take, then its give',
    request: () => name('wc-shards', 'i1', 'i0'),
    settle: (context) => untilMerged(context, 'wc-shards', 'i1'),
    expect: [202],
    times: 1,
  },
  {
    route: 'PUT /admin/boards/{board}/aliases/{alias}',
    worst:
      "a seeded item of the 8-metric board named an alias of another: every metric's 8 windows taken and given in one call a step (the last metric's snapshots crossed)",
    request: () => name('wc-metrics', 'i3', 'i4'),
    settle: (context) => untilMerged(context, 'wc-metrics', 'i3'),
    expect: [202],
    times: 1,
  },
  {
    route: 'PUT /admin/boards/{board}/aliases/{alias}',
    worst:
      "a seeded item of the 8-metric board of 8 wilson and controversial views named an alias of another: every metric's windows and the views reading them",
    request: () => name('wc-rated', 'i3', 'i4'),
    settle: (context) => untilMerged(context, 'wc-rated', 'i3'),
    expect: [202],
    times: 1,
  },
  {
    route: 'PUT /admin/boards/{board}/aliases/{alias}',
    worst:
      "a seeded item of the 64-shard 8-metric board of 8 wilson and controversial views named an alias of an item of another shard: a take of every metric's windows, then its give on the canonical item's shard (every metric's windows drained and crossed first)",
    request: () => name('wc-rated64', RATED64_MERGE.alias, RATED64_MERGE.item),
    settle: (context) => untilMerged(context, 'wc-rated64', RATED64_MERGE.alias),
    expect: [202],
    times: 1,
  },
  {
    route: 'PUT /admin/boards/{board}/aliases/{alias}',
    worst: `an alias past the board's most (${ALIASES_PER_BOARD}): refused, nothing stored`,
    prepare: fillAliases,
    request: (_context, attempt) => name(FILLED, `wc-full-${attempt}`, 'i0'),
    expect: [409],
    times: 1,
  },
];
