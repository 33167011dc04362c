/**
 * The worst-case rows `npm test` runs on a Cluster too (test/e2e/worst-case-cluster.e2e-spec.ts): those
 * whose Redis calls there are not a single node's (WorstRow.cluster), on the boards they read, each
 * seeded with what those rows read of it as seed.ts leaves it, and nothing else: the single-node run
 * measures every other row and option, and a Cluster's seeding is the time this variant costs.
 */
import { type BoardName, BOARDS } from './boards';
import { WORST_ROWS } from './harness';
import type { HarnessContext, WorstRow } from './harness-types';
import type { RedisMeter } from './redis-meter';
import { batches, declare } from './seed';
import { loggedStep } from './seed-log';

export const CLUSTER_ROWS: readonly WorstRow[] = WORST_ROWS.filter((row) => row.cluster !== undefined);

const MINUTE_SEC = 60;

/**
 * The 64-shard board of every option as its lookup rows read it: seed.ts's items in descending order
 * with their amounts (a lookup counts them in the window it names, `m`), then its snapshot boundaries
 * (previous ranks). Their actors and segments are left out: no lookup reads them, and on 64 shards they
 * are most of the seeding's time.
 */
async function seedShards(context: HarnessContext): Promise<void> {
  const { items, snapshots } = context.sizes;
  await batches(context, 'wc-shards', items, (n) => ({ item: `i${n}`, amount: items - n }));
  for (let boundary = 0; boundary < snapshots; boundary++) {
    await context.advanceSec(MINUTE_SEC);
    await batches(context, 'wc-shards', 8, (n) => ({ item: `i${n}`, amount: 1 }));
  }
}

/** The strict competition board as seed.ts fills it: one pair for every item. */
async function seedTiebreakFirst(context: HarnessContext): Promise<void> {
  await batches(context, 'wc-tb-first', context.sizes.items, (n) => ({ item: `t${n}`, score: 7, tiebreak: 0 }));
}

/** How each board a Cluster row reads is filled. */
export const CLUSTER_SEEDS: Partial<Record<BoardName, (context: HarnessContext) => Promise<void>>> = {
  'wc-shards': seedShards,
  'wc-tb-first': seedTiebreakFirst,
};

/** The boards `rows` send their requests to (a request's path names its board). */
export function boardsRead(context: HarnessContext, rows: readonly WorstRow[]): BoardName[] {
  const named = rows.flatMap((row) => {
    const path = row.request?.(context, 0).path ?? '';
    return /^\/(?:admin\/)?boards\/([^/?]+)/.exec(path)?.[1] ?? [];
  });
  return [...new Set(named)].filter((name): name is BoardName => name in BOARDS);
}

/**
 * Declares and fills the boards the Cluster rows read, the boards at once (a board's lookups read its
 * items in windows of 1 000 slots or more: the minute another board's boundaries move the clock to
 * changes none of them); fails on one CLUSTER_SEEDS does not fill.
 */
export async function seedClusterBoards(context: HarnessContext, meter?: RedisMeter): Promise<void> {
  const boards = boardsRead(context, CLUSTER_ROWS);
  const unseeded = boards.filter((name) => !CLUSTER_SEEDS[name]);
  if (unseeded.length > 0) throw new Error(`Cluster rows read boards CLUSTER_SEEDS does not fill: ${unseeded}`);
  await loggedStep(meter, boards.join(' '), async () => {
    for (const name of boards) await declare(context, name, BOARDS[name]);
    await Promise.all(boards.map((name) => CLUSTER_SEEDS[name]!(context)));
  });
}
