import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../../support/slowlog';

/**
 * An item's history on a sharded board counts the rows ahead of it on the other shards in calls per
 * Redis node (history_count_shards), not one call per shard (issue #45), and answers what one shard
 * answers. Counted without a clock, from the FCALLs SLOWLOG logged (at 0 µs).
 */
const T0 = 1_699_999_980_000;
const MINUTE_MS = 60_000;
const SHARDS = 16;
const ITEMS = 60;

describe('the calls of an item history on a sharded board (single)', () => {
  const clock = new FakeClock(T0);
  // A server of its own: the test reads every call it ran from its SLOWLOG.
  const own = useOwnServerRanking(clock);

  it('counts the other shards in one call of the node, answering as one shard does', async () => {
    const { ranking } = own();
    const windows = [{ name: 'm', period: '5m', interval: '1m', snapshots: { keep: 4, top: ITEMS } }];
    await ranking.putBoard({ name: 'one', windows });
    await ranking.putBoard({ name: 'many', windows, shards: SHARDS });
    for (let minute = 0; minute < 4; minute++) {
      const entries = Array.from({ length: ITEMS }, (_, n) => ({
        item: `i${n}`,
        amount: 1 + ((n * (minute + 3)) % 17),
      }));
      for (const name of ['one', 'many']) {
        await ranking.incrementBatch(name, entries);
        // Crosses each shard's boundary: the history read then finds every snapshot taken.
        await ranking.top(name, 'm', 0, 1);
      }
      clock.advanceMs(MINUTE_MS);
    }
    for (const name of ['one', 'many']) await ranking.top(name, 'm', 0, 1);

    await logEveryCommand(own().node);
    const answers = [];
    for (const item of ['i0', 'i7', 'i33', 'i59'])
      answers.push(await ranking.itemHistory('many', 'm', item, undefined, undefined));
    const calls = (await loggedCalls(own().node)).map(({ call }) => String(call[1]));
    await stopLoggingEveryCommand(own().node);

    for (const [k, item] of ['i0', 'i7', 'i33', 'i59'].entries()) {
      const expected = await ranking.itemHistory('one', 'm', item, undefined, undefined);
      expect(answers[k].points).toEqual(expected.points);
      expect(expected.points.filter((point) => point.rank !== null).length).toBeGreaterThan(0);
    }
    // One per shard was SHARDS - 1 history_count calls per read; a node's call takes several shards.
    expect(calls.filter((name) => name.endsWith('_history_count'))).toEqual([]);
    const nodeCalls = calls.filter((name) => name.endsWith('_history_count_shards')).length;
    expect(nodeCalls).toBeGreaterThanOrEqual(4);
    expect(nodeCalls).toBeLessThanOrEqual((4 * (SHARDS - 1)) / 3);
  });
});
