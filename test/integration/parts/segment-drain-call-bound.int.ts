import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';
import { segmentsOf as segmentsOption } from '../../../src/ranking/options/segments/segments.option';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand, type LoggedCall } from '../../support/slowlog';

/**
 * The calls of a write naming 8 segments (issue #45), counted without a clock from the commands each
 * FCALL's script ran (SLOWLOG at 0 µs). After their slots all expired it drains one budget
 * (EXPIRE_CHUNK fields) in its call, shared by the board's windows and the segments: each segment was
 * given a whole budget of its own, so the call drained 9 budgets (2 843 commands here, 403 now); what a
 * call leaves is drained by later calls, and no read sees the expired events as live meanwhile. After a
 * boundary of windows keeping snapshots, a call that stores a listing applies no such write: the last
 * listing and the write were one call, the costliest of the harness's first write after a boundary
 * (701 commands and a listing of 1 000 rows, 8–13 ms on a loaded host; the write alone 691, 2.4–2.8 ms).
 */
const T0 = 1_700_006_400_000;
const SEGMENTS = Array.from({ length: 8 }, (_, k) => `s${k}`);
/** Items each segment held in its expired slot: more than a budget (EXPIRE_CHUNK, 100) each. */
const ITEMS = 300;
/** Most commands the write's call may run: one budget's drain (about 3 commands a field) and the write. */
const CALL_COMMANDS = 600;

/** Items each segment holds when its listings are stored: more than a read's READ_APART_ROWS (100). */
const LISTED = 200;
/** Most commands a call storing a listing may run: the listing's and the marks it checks, no write. */
const LISTING_CALL_COMMANDS = 100;

const incrementCalls = (calls: LoggedCall[]) => calls.filter(({ call }) => /_increment$/.test(String(call[1])));
/** Whether a call stored a snapshot listing (snapshot_lib take_snapshot: SET <window>:snap:<at>). */
const storesListing = ({ commands }: LoggedCall) =>
  commands.some(([name, key]) => name.toUpperCase() === 'SET' && key.includes(':snap:'));

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
    const calls = incrementCalls(await loggedCalls(node)).map(({ commands }) => commands.length);
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

  it('after a boundary of windows keeping snapshots, applies the write in no call storing a listing', async () => {
    const { ranking, node } = own();
    const windows = ['w1', 'w2'].map((name, i) => ({
      name,
      period: `${i + 1}h`,
      interval: '1m',
      snapshots: { keep: 2, top: 1000 },
    }));
    await ranking.putBoard({ name: 'c', windows, ...segmentsOption({ max: 100 }) } as never);
    const entries = Array.from({ length: LISTED }, (_, n) => ({ item: `i${n}`, amount: n + 1, segments: SEGMENTS }));
    for (let k = 0; k < LISTED; k += 5) await ranking.incrementBatch('c', entries.slice(k, k + 5));
    clock.advanceMs(60_000);
    await logEveryCommand(node);
    await ranking.increment('c', 'i0', 5, undefined, undefined, undefined, undefined, SEGMENTS);
    const calls = incrementCalls(await loggedCalls(node));
    await stopLoggingEveryCommand(node);
    const listing = calls.filter(storesListing).map(({ commands }) => commands.length);
    // Before: the call storing the last listing applied the write too (225 commands; 59 now).
    expect(Math.max(...listing)).toBeLessThanOrEqual(LISTING_CALL_COMMANDS);
    // The board's 2 listings and its 8 segments' 16, 4 a call (snapshot_lib ROWS_PER_CALL), then the
    // write in a call of its own.
    expect(listing.length).toBe(5);
    expect(calls.length).toBe(listing.length + 1);
    for (const segment of SEGMENTS) expect((await ranking.item('c', 'w1', 'i0', { segment })).score).toBe(1 + 5);
  });
});
