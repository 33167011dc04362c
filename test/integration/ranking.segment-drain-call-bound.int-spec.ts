import { FakeClock } from '../../harness/clock';
import { useOwnServerRanking } from '../../harness/ranking';
import { segmentsOf as segmentsOption } from '../../src/ranking/options/segments/segments.option';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand, type LoggedCall } from '../support/slowlog';

/**
 * A write naming 8 segments whose slots all expired drains one budget (EXPIRE_CHUNK fields) in its
 * call, shared by the board's windows and the segments (issue #45): each segment was given a whole
 * budget of its own, so the call drained 9 budgets (2 843 commands here, 403 now). What a call leaves is
 * drained by later calls, and no read sees the expired events as live meanwhile. Counted without a
 * clock, from the commands each FCALL's script ran (SLOWLOG at 0 µs).
 */
const T0 = 1_700_006_400_000;
const SEGMENTS = Array.from({ length: 8 }, (_, k) => `s${k}`);
/** Items each segment held in its expired slot: more than a budget (EXPIRE_CHUNK, 100) each. */
const ITEMS = 300;
/** Most commands the write's call may run: one budget's drain (about 3 commands a field) and the write. */
const CALL_COMMANDS = 600;

const incrementCalls = (calls: LoggedCall[]) =>
  calls.filter(({ call }) => /_increment$/.test(String(call[1]))).map(({ commands }) => commands.length);

describe('the drain of a write naming 8 segments whose slots expired (single)', () => {
  const clock = new FakeClock(T0);
  // A server of its own: the test reads every command it ran from its SLOWLOG.
  const own = useOwnServerRanking(clock);

  beforeAll(async () => {
    const { ranking } = own();
    const windows = [{ name: 'h', period: '1h', interval: '1m' }];
    await ranking.putBoard({ name: 'b', windows, ...segmentsOption({ max: 100 }) } as never);
    const entries = Array.from({ length: ITEMS }, (_, n) => ({ item: `i${n}`, amount: n + 1, segments: SEGMENTS }));
    for (let k = 0; k < ITEMS; k += 10) await ranking.incrementBatch('b', entries.slice(k, k + 10));
    clock.advanceMs(2 * 3_600_000);
  });

  it('drains at most one budget in the call, and no segment read counts an expired event', async () => {
    const { ranking, node } = own();
    await logEveryCommand(node);
    await ranking.increment('b', 'new', 5, undefined, undefined, undefined, undefined, SEGMENTS);
    const calls = incrementCalls(await loggedCalls(node));
    await stopLoggingEveryCommand(node);
    expect(calls.length).toBe(1);
    // Before: 2 843 commands, 9 budgets of 100 fields (the board's and one a segment); now 403.
    expect(calls[0]).toBeLessThanOrEqual(CALL_COMMANDS);

    for (const segment of SEGMENTS) {
      let page = await ranking.top('b', 'h', 0, 10, { segment });
      for (let reads = 0; page.draining && reads < 20; reads++) page = await ranking.top('b', 'h', 0, 10, { segment });
      expect({ segment, items: page.items.map(({ item, score }) => [item, score]) }).toEqual({
        segment,
        items: [['new', 5]],
      });
    }
  });
});
