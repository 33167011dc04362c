/**
 * How the write bench (write-instructions.ts) and its neighbours seed the harness's boards: stored as the
 * controller stores a PUT's body, filled as seed.ts fills them, in batches.
 */
import { BOARDS, MODERATED_GROUP_IDS, SIZES } from '../harness/worst-case/boards';
import { type RankingGraph } from '../harness/compose-ranking';
import { ModerationService } from '../src/ranking/moderation/moderation.service';
import { MODERATED_GROUPS_PER_BOARD, MODERATED_ITEMS_PER_SHARD } from '../src/ranking/core/ranking.limits';
import { WriteCommands, type BatchInput } from '../src/ranking/writes/write-commands';
import { capOf } from '../src/ranking/options/actor-caps/actor-caps.option';
import { actorsKept } from '../src/ranking/options/actors/actors.option';
import { optionsOf } from '../src/ranking/options/registry';
import { segmentsOf as segmentsOption } from '../src/ranking/options/segments/segments.option';

const SIZE = SIZES.ci;
const SEED_BATCH = 100;

/** What seeding needs of a bench: the graph and the write commands. */
export interface Seeding {
  graph: RankingGraph;
  commands: WriteCommands;
}

export async function batches(bench: Seeding, board: string, count: number, entry: (n: number) => BatchInput) {
  for (let first = 0; first < count; first += SEED_BATCH) {
    const entries = Array.from({ length: Math.min(SEED_BATCH, count - first) }, (_, k) => entry(first + k));
    await bench.graph.ranking.incrementBatch(bench.commands.batch({ board, entries }));
  }
}

/** A harness board stored as the controller reads a PUT's body (ranking.controller.ts putBoard). */
export async function putHarnessBoard(
  graph: RankingGraph,
  name: 'wc-sum' | 'wc-seg' | 'wc-modgroups',
  storedAs: string = name,
): Promise<void> {
  const { actors, segments, ...body } = structuredClone(BOARDS[name]) as (typeof BOARDS)['wc-modgroups'];
  const options = { ...body, actors: actorsKept(actors), ...segmentsOption(segments) };
  await graph.ranking.putBoard({ name: storedAs, ...body, ...optionsOf(options), ...capOf(actors) } as never);
}

/** seed.ts's sum board entry `n`: its score, actor and segment. */
export const sumEntry = (n: number) => ({
  item: `i${n}`,
  amount: SIZE.items - n,
  actor: `a${n % SIZE.actors}`,
  segments: [`s${n % SIZE.segments}`],
});

/**
 * wc-modgroups as seed.ts seeds it (the head's items in MODERATED_GROUP_IDS' groups) and as the moderation
 * rows leave it: every group but g0 hidden, and the most item states on items of no hidden group.
 */
export async function seedModeratedGroups(bench: Seeding): Promise<void> {
  await putHarnessBoard(bench.graph, 'wc-modgroups');
  const { groups, itemsEach } = MODERATED_GROUP_IDS;
  await batches(bench, 'wc-modgroups', SIZE.items, (n) => ({
    ...sumEntry(n),
    group: n < groups * itemsEach ? `g${n % groups}` : 'rest',
  }));
  const moderation = bench.graph.module.get(ModerationService);
  for (let g = 1; g < MODERATED_GROUPS_PER_BOARD; g++)
    await moderation.setGroupState({ name: 'wc-modgroups', group: `g${g}`, state: 'hidden' });
  const free = Array.from({ length: groups * itemsEach }, (_, n) => n).filter(
    (n) => n % groups >= MODERATED_GROUPS_PER_BOARD,
  );
  const freeStep = Math.max(1, Math.floor(free.length / MODERATED_ITEMS_PER_SHARD));
  for (let k = 0; k < MODERATED_ITEMS_PER_SHARD; k++)
    await moderation.setState({ name: 'wc-modgroups', item: `i${free[k * freeStep]}`, state: 'hidden' });
}
