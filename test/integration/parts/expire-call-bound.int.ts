import { FakeClock } from '../../../harness/clock';
import { AppConfig } from '../../../src/common/config';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { seedEveryOptionBoard } from '../../support/board-settings';
import { useIdleExpirer } from '../../support/ranking-graph';

const T0 = 1_700_000_000_000;
const ITEMS = 600;
const ACTORS = 30;
/** As many segments as one expire call drained before (SEGMENTS_EXPIRED_PER_CALL), each holding items. */
const SEGMENTS = 64;
const IDLE_MS = 14 * 86_400_000;
/** The worst-case harness's WRITE_CALL_COMMANDS: most commands a write call's (or an admin step's) script may run. */
const WRITE_CALL_COMMANDS = Math.ceil(new AppConfig().WRITE_COST_PER_CALL * 0.8);
const MOST_PASSES = 50;

/**
 * The scheduler's expiry of a board idle for weeks (issue #45): on the board of every option (8
 * windows, 8 views, segments, ties first, capped actors), one expire call crossed the boundaries,
 * drained EXPIRE_CHUNK fields of every window, moved a decay view's rebase chunk and drained up to 64
 * segments each within the chunk: 2 507 commands (~22 ms) in the worst-case harness, past the
 * WRITE_CALL_COMMANDS (1 440) a write call or an admin step may run. Each expire call now spends the
 * units of an admin step (a listing stored at a boundary a call of its own), and the rest is the next
 * call's or the next pass's; the board is still drained to the end. Counted without a clock, from the
 * commands each FCALL's script ran (SLOWLOG at 0 µs).
 */
describe('the expire calls of a scheduler pass after an idle board of every option (single)', () => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  const { expirer, expirePasses } = useIdleExpirer(clock, IDLE_MS, async (graph) => {
    const { ranking } = graph;
    await seedEveryOptionBoard(graph, commands, 'idle', { items: ITEMS, actors: ACTORS, segments: SEGMENTS });
    // A boundary crossed: the 10 000-minute window's mark is set, so the next crossing stores its listing.
    clock.advanceMs(60_000);
    await ranking.incrementBatch(commands.batch({ board: 'idle', entries: [{ item: 'i0', amount: 1, actor: 'a0' }] }));
  });

  it('runs no expire call past WRITE_CALL_COMMANDS, and the passes drain the board to the end', async () => {
    const { calls, passes } = await expirePasses(MOST_PASSES);
    const most = Math.max(...calls.map(({ commands }) => commands.length));
    expect(calls.length).toBeGreaterThan(0);
    // Before: a call of 2 777 commands (up to 64 segments drained beside the board's windows); now 418 at most.
    expect(most).toBeLessThanOrEqual(WRITE_CALL_COMMANDS);
    expect(passes).toBeLessThan(MOST_PASSES);
    // Drained: the hour's window lists nothing, the 400-day window every item.
    const { ranking } = expirer();
    expect((await ranking.top('idle', 'hour', 0, 10)).items).toEqual([]);
    expect((await ranking.top('idle', 'd', 0, 1000)).items).toHaveLength(ITEMS);
    expect((await ranking.top('idle', 'hour', 0, 10, { segment: 's1' })).items).toEqual([]);
  }, 120_000);
});
