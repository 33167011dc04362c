import { FakeClock } from '../../../harness/clock';
import { shardOf } from '../../../src/ranking/core/shard-math';
import { useRankingGraph } from '../../support/ranking-graph';

/**
 * Issue #48: a quiet part of one group reads each member's value in every slot it takes out
 * (group_parts_lib's quiet_rows, QUIET_VALUES_MOST 20 000 values): past that, the part is over its room
 * and its boundary keeps no listing (docs/api.md), so a history read answers the listing kept before
 * it. Shard 0 holds a group's members and indexes each of the window's 30 slots, its members all
 * scored in the last (+58 s); then it runs no call while shard 1 runs one in each slot (a membership
 * change). The settle round at +118 finds shard 0 quiet at +114, +116 and +118, which take out 27, 28
 * and 29 slots: 689 members read at most 19 981 values (every boundary kept), 690 read 20 010 at +118
 * (none kept there: the read answers +116's listing).
 */
const T0 = 1_600_000_000_000;
const SHARDS = 2;
const SLOTS = 30;

function namesOn(shard: number, prefix: string, count: number): string[] {
  const names: string[] = [];
  for (let k = 0; names.length < count; k++)
    if (shardOf(`${prefix}${k}`, SHARDS) === shard) names.push(`${prefix}${k}`);
  return names;
}

describe.each([
  [689, { at: 118, score: 10 }],
  [690, { at: 116, score: 11 }],
])('a quiet part of %i members over 29 slots taken out (single)', (members, latest) => {
  const clock = new FakeClock(T0);
  const world = useRankingGraph('single', clock, {});

  it('keeps its boundary listed up to 20 000 slot values read, and none past', async () => {
    const { ranking, groupBoards } = world.graph;
    const windows = [{ name: 'w', period: 60, interval: 2, snapshots: { keep: 40, top: 10 } }];
    await ranking.putBoard({ name: 'vm', windows, shards: SHARDS });
    await ranking.putBoard({ name: 'vg', groupOf: { board: 'vm', window: 'w', top: 10, decay: 1 } });
    const quiet = namesOn(0, 'q', members);
    const [busy] = namesOn(1, 'b', 1);
    for (let first = 0; first < quiet.length; first += 200)
      await Promise.all(
        quiet.slice(first, first + 200).map((item) => groupBoards.setMember({ name: 'vg', group: 'q', item })),
      );
    for (let slot = 0; slot < SLOTS - 1; slot++) {
      clock.setMs(T0 + slot * 2000);
      await ranking.increment('vm', quiet[0], 1); // shard 0 indexes each slot
    }
    clock.setMs(T0 + 58_000);
    await ranking.incrementBatch(
      'vm',
      quiet.map((item) => ({ item, amount: 1 })),
    );
    for (let slot = SLOTS; slot < 2 * SLOTS - 1; slot++) {
      clock.setMs(T0 + slot * 2000);
      await groupBoards.setMember({ name: 'vg', group: 'b', item: busy }); // shard 1 alone from +60 s
    }
    clock.setMs(T0 + 118_000);
    const answer = await ranking.history('vg', undefined, undefined);
    expect({ at: answer.at, rows: answer.items.map(({ item, score }) => ({ item, score })) }).toEqual({
      at: T0 / 1000 + latest.at,
      rows: [{ item: 'q', score: latest.score }],
    });
  });
});
