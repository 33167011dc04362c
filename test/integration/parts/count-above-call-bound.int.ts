import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';
import { segmentsOf as segmentsOption } from '../../../src/ranking/options/segments/segments.option';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand, type LoggedCall } from '../../support/slowlog';
import { EIGHT_ROLLING_WINDOWS } from '../../../harness/worst-case/boards';

/**
 * The other shards' share of a rank on a 64-shard board (count_above_shards, issue #45): a write's
 * rank in 8 windows of `ties: first` was 4 calls of 680 commands (6.3 ms a call in the worst-case
 * harness, 860 commands there with its hidden items), an item's rank and percentile one call of 378
 * over the 63 other shards (5.3 ms). Calls now weigh each shard's own reads and each window's slot
 * check, a write counts no listed items, and the answers stay those of a one-shard twin. Counted
 * without a clock, from the commands each FCALL's script ran (SLOWLOG at 0 µs).
 */
const T0 = 1_699_999_980_000;
const SHARDS = 64;
const ITEMS = 640;
/**
 * Most commands one count_above_shards call may run here: the harness's lookup calls of 416 commands
 * held Redis 5.4 ms; a call of these (ZRANGE, ZCOUNT, HMGET) is lighter, but no heavier a call is wanted.
 */
const CALL_COMMANDS = 400;
const WINDOWS = EIGHT_ROLLING_WINDOWS;

/** The commands of each call logged of a function whose name ends with `suffix`. */
const commandsOf = (calls: LoggedCall[], suffix: RegExp) =>
  calls.filter(({ call }) => suffix.test(String(call[1]))).map(({ commands }) => commands.length);
const countCalls = (calls: LoggedCall[]) => commandsOf(calls, /_count_above_shards$/);

describe('the calls counting above a score on the other shards of a 64-shard board (single)', () => {
  const clock = new FakeClock(T0);
  // A server of its own: the test reads every command it ran from its SLOWLOG.
  const own = useOwnServerRanking(clock);

  beforeAll(async () => {
    const { ranking } = own();
    const config = { windows: WINDOWS, ties: 'first' as const, ...segmentsOption({ max: 10_000 }) };
    await ranking.putBoard({ name: 'one', ...config } as never);
    await ranking.putBoard({ name: 'many', ...config, shards: SHARDS } as never);
    // Distinct scores but i5 and i6 (7 each, i6 first): the write's item then ties on every shard's order.
    const entries = Array.from({ length: ITEMS }, (_, n) => ({ item: `i${n}`, amount: n === 5 ? 6 : n + 1 }));
    for (const name of ['one', 'many'])
      for (let k = 0; k < ITEMS; k += 40) await ranking.incrementBatch(name, entries.slice(k, k + 40));
    clock.advanceMs(1_000);
  });

  it("ranks an existing item's write in 8 windows in calls of at most CALL_COMMANDS commands, as one shard does", async () => {
    const { ranking, node } = own();
    const segments = ['a', 'b', 'c'];
    const expected = await ranking.increment('one', 'i5', 1, undefined, undefined, undefined, undefined, segments);
    await logEveryCommand(node);
    const written = await ranking.increment('many', 'i5', 1, undefined, undefined, undefined, undefined, segments);
    const calls = countCalls(await loggedCalls(node));
    await stopLoggingEveryCommand(node);

    expect(written.body.windows).toEqual(expected.body.windows);
    // i6 reached 7 first: i5 ranks after it.
    expect(written.body.windows.m.rank).toBe(ITEMS - 5);
    expect(calls.length).toBeGreaterThan(0);
    // Before: 4 calls of 680 commands (20 shards each, a listed count per window it did not need).
    expect(Math.max(...calls)).toBeLessThanOrEqual(CALL_COMMANDS);
  });

  it("answers an item's rank and percentile over the other shards in calls of at most half CALL_COMMANDS", async () => {
    const { ranking, node } = own();
    for (const item of ['i6', 'i0', 'i300']) {
      await logEveryCommand(node);
      const read = await ranking.item('many', 'm', item);
      const calls = countCalls(await loggedCalls(node));
      await stopLoggingEveryCommand(node);
      expect({ ...read, board: 'one' }).toEqual(await ranking.item('one', 'm', item));
      // Before: one call of 378 commands over the 63 other shards (5.3 ms in the harness, hidden items counted).
      expect(calls.length).toBeGreaterThan(0);
      expect(Math.max(...calls)).toBeLessThanOrEqual(CALL_COMMANDS / 2);
    }
  });

  it('looks up the most ids the cost cap takes there (31) in calls of at most CALL_COMMANDS commands, as one shard does', async () => {
    const { lookup, node } = own();
    const items = Array.from({ length: 31 }, (_, n) => `i${(n * 7) % ITEMS}`);
    const ask = { window: 'm', items, relative: false, withData: true };
    const expected = await lookup.lookup({ name: 'one', ...ask });
    await logEveryCommand(node);
    const looked = await lookup.lookup({ name: 'many', ...ask });
    const calls = commandsOf(await loggedCalls(node), /_lookup(_node|_count_shards)?$/);
    await stopLoggingEveryCommand(node);
    expect(looked.items).toEqual(expected.items);
    expect(calls.length).toBeGreaterThan(0);
    // Before: 16 lookup_node calls of 2 ids, 584 commands each (every shard's config read twice a call).
    expect(Math.max(...calls)).toBeLessThanOrEqual(CALL_COMMANDS);
  });
});
