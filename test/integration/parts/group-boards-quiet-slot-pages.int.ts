import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';
import { shardOf } from '../../../src/ranking/core/shard-math';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand, type LoggedCall } from '../../support/slowlog';

/**
 * Issues #45/#48: a quiet part of a max board reads each member's value in every slot still in the
 * window (group_parts_lib's quiet parts). One member over 600 slots weighs more than a whole crossing
 * call (2 crossing rows a value, 1 000 a call): its values are read over two calls, its best so far
 * kept where no reader reads it (group_part_pages_lib), where one call read all 600 before. Shard 0
 * scores p in each of the window's 600 slots (1 000 in the first, one less in each next), then runs no
 * call while shard 1 runs one in slots +1200 and +1202 (a membership change): the read at +1204 finds
 * shard 0 quiet at +1202 (slot +0 gone: 999) and +1204 (slot +2 gone too: 998). SLOWLOG counts the
 * slot reads (HMGET of a slot hash) of each call.
 */
const T0 = 1_600_000_000_000;
const SHARDS = 2;
const SLOTS = 600;
/** Slot values one crossing call reads at most (1 000 crossing rows, 2 a value). */
const VALUES_PER_CALL = 500;

const nameOn = (shard: number, prefix: string) => {
  for (let k = 0; ; k++) if (shardOf(`${prefix}${k}`, SHARDS) === shard) return `${prefix}${k}`;
};

const slotReads = ({ commands }: LoggedCall): number =>
  commands.filter(([name, key]) => name.toLowerCase() === 'hmget' && /:slot:\d+$/.test(key)).length;

describe('a quiet member of a max board over more slots than a crossing call reads (single)', () => {
  const clock = new FakeClock(T0);
  const own = useOwnServerRanking(clock);

  it('reads its slot values over calls and keeps its best at each quiet boundary', async () => {
    const { ranking, groupBoards, node } = own();
    const windows = [{ name: 'w', period: 2 * SLOTS, interval: 2, snapshots: { keep: 10, top: 10 } }];
    await ranking.putBoard({ name: 'xm', windows, shards: SHARDS, aggregate: 'max' });
    await ranking.putBoard({ name: 'xg', groupOf: { board: 'xm', window: 'w', top: 10, decay: 1 } });
    const [p, q] = [nameOn(0, 'p'), nameOn(1, 'q')];
    await groupBoards.setMember({ name: 'xg', group: 'a', item: p });
    await groupBoards.setMember({ name: 'xg', group: 'b', item: q });
    for (let k = 0; k < SLOTS; k++) {
      clock.setMs(T0 + 2000 * k);
      await ranking.score('xm', p, 1000 - k);
    }
    for (const at of [1200, 1202]) {
      clock.setMs(T0 + at * 1000);
      await groupBoards.setMember({ name: 'xg', group: 'b', item: q }); // shard 1 alone
    }
    clock.setMs(T0 + 1204_000);

    await logEveryCommand(node);
    const latest = await ranking.history('xg', undefined, undefined);
    const calls = await loggedCalls(node);
    await stopLoggingEveryCommand(node);

    const at = T0 / 1000;
    expect({ at: latest.at, rows: latest.items.map(({ item, score }) => ({ item, score })) }).toEqual({
      at: at + 1204,
      rows: [{ item: 'a', score: 998 }],
    });
    const points = await ranking.itemHistory('xg', undefined, 'a', undefined, undefined);
    expect(points.points.filter((point) => point.at >= at + 1200)).toEqual([
      { at: at + 1200, rank: 1, score: 1000 },
      { at: at + 1202, rank: 1, score: 999 },
      { at: at + 1204, rank: 1, score: 998 },
    ]);
    const reads = calls.map(slotReads);
    expect(reads.filter((count) => count > 0).length).toBeGreaterThanOrEqual(4); // 2 quiet parts, 2 calls each
    expect(Math.max(...reads)).toBeLessThanOrEqual(VALUES_PER_CALL);
  });
});
