import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';
import { WRITE_CALL_COMMANDS } from '../../../harness/worst-case/harness';
import { WRITE_RANK_SHARD_DRAINS } from '../../../src/ranking/core/ranking.limits';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand, type LoggedCall } from '../../support/slowlog';
import { EIGHT_ROLLING_WINDOWS } from '../../../harness/worst-case/boards';

/**
 * A write's rank over the other shards of a board whose shards all hold expired slots in a window still
 * live (issue #45): it drained every other shard first, one count_above call each (a 64-shard board of
 * 8 windows idle for hours in the worst-case harness: 135 calls, 31 k commands, 89 ms of Redis CPU for
 * one write). It now drains WRITE_RANK_SHARD_DRAINS of them and counts the rest as they stand,
 * answering draining; with no more such shards than that its answer is exact, as a one-shard twin's.
 * Counted without a clock, from the commands each call's script ran (SLOWLOG at 0 µs).
 */
const T0 = 1_699_999_980_000;
const ITEMS = 1_280;
/**
 * Two expired slots of them drain in one call, on one shard too: EXPIRE_CHUNK fields' worth of a plain
 * board's drain, each field of this board of ties first weighing more (drain_lib: 42 fields a call).
 */
const FEW_ITEMS = 15;
const HOUR_MS = 3_600_000;
const WINDOWS = EIGHT_ROLLING_WINDOWS;
/**
 * Most commands the write's request may run in all: its own call and the drains, each a write call's
 * at most, and the read-only counts over the other shards (a few hundred commands).
 */
const REQUEST_COMMANDS = (2 + WRITE_RANK_SHARD_DRAINS) * WRITE_CALL_COMMANDS;

const called = (calls: LoggedCall[], suffix: RegExp) => calls.filter(({ call }) => suffix.test(String(call[1])));

describe("a write's rank over the other shards, every shard holding expired slots (single)", () => {
  const clock = new FakeClock(T0);
  // A server of its own: the test reads every command it ran from its SLOWLOG.
  const own = useOwnServerRanking(clock);

  beforeAll(async () => {
    const { ranking } = own();
    const boards = [
      ['one', 1, ITEMS],
      ['many', 64, ITEMS],
      ['fewOne', 1, FEW_ITEMS],
      ['few', 3, FEW_ITEMS],
    ] as const;
    for (const [name, shards] of boards)
      await ranking.putBoard({ name, windows: WINDOWS, ties: 'first', ...(shards > 1 ? { shards } : {}) });
    // Every item at T0, again five hours later; then the six-hour window's first slot expired on every
    // shard (the second still live), none drained yet.
    for (const [amount, laterMs] of [
      [(n: number) => n + 1, 5 * HOUR_MS],
      [() => 1, 1.5 * HOUR_MS],
    ] as const) {
      for (const [name, , items] of boards)
        for (let k = 0; k < items; k += 40) {
          const ids = Array.from({ length: Math.min(40, items - k) }, (_, i) => k + i);
          await ranking.incrementBatch(
            name,
            ids.map((n) => ({ item: `i${n}`, amount: amount(n) })),
          );
        }
      clock.advanceMs(laterMs);
    }
  });

  it('drains WRITE_RANK_SHARD_DRAINS other shards of 64 at most, each call and the request bounded', async () => {
    const { ranking, node } = own();
    await logEveryCommand(node);
    const written = await ranking.increment('many', 'i5', 1);
    const calls = await loggedCalls(node);
    await stopLoggingEveryCommand(node);

    // Before: one count_above call for each of the 63 other shards, 63 drains in one request.
    expect(called(calls, /_count_above$/).length).toBeLessThanOrEqual(WRITE_RANK_SHARD_DRAINS);
    expect(called(calls, /_count_above_shards$/).length).toBeGreaterThan(0);
    const commands = calls.map(({ commands: run }) => run.length);
    expect(Math.max(...commands)).toBeLessThanOrEqual(WRITE_CALL_COMMANDS);
    expect(commands.reduce((sum, n) => sum + n, 0)).toBeLessThanOrEqual(REQUEST_COMMANDS);
    // The shards left undrained counted with their expired data: the write says so.
    expect(written.body.draining).toBe(true);
  });

  it("answers the item's read exactly after that write, as one shard does (windows with no expired data)", async () => {
    const { ranking } = own();
    await ranking.increment('one', 'i5', 1);
    // The hour window's expired slot on one shard is more than a read drains (503): its twin is not read.
    for (const window of ['m', 'd', 'q'])
      expect({ ...(await ranking.item('many', window, 'i5')), board: 'one' }).toEqual(
        await ranking.item('one', window, 'i5'),
      );
  });

  it('answers a write exactly, as one shard does, when no more shards than it drains hold expired slots', async () => {
    const { ranking } = own();
    const [expected, written] = [await ranking.increment('fewOne', 'i7', 1), await ranking.increment('few', 'i7', 1)];
    expect(written.body.windows).toEqual(expected.body.windows);
    expect(written.body.draining).toBe(false);
  });
});
