import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';
import { AppConfig } from '../../../src/common/config';
import { segmentsOf } from '../../../src/ranking/options/segments/segments.option';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../../support/slowlog';

const T0 = 1_700_000_040_000;
/** Items of the expired slot: more than one write's drain takes (EXPIRE_CHUNK fields a plain board). */
const ITEMS = 300;
const EXPIRE_CHUNK = new AppConfig().EXPIRE_CHUNK;
const WINDOWS = [{ name: 'm', period: '1h', interval: '1m' }];
/** Views of the window, each run for a segment's drained field as for the board's (~3 commands a view). */
const SEGMENT_VIEWS = [
  { name: 'fading', mode: 'decay', window: 'm', halfLife: '30m' },
  { name: 'slow', mode: 'decay', window: 'm', halfLife: '2h' },
  { name: 'hotm', mode: 'hot', window: 'm' },
];

/**
 * A write's drain of an expired slot (issue #45, the worst-case harness's "an existing item of the head
 * moved to another group on 64 shards" at full size, after the seeding's 100 minutes: 1 422 commands,
 * 13.3 ms): every field it drains on a `groups: true` board takes its item out of the groups map (the
 * map, its reverse, the kept listings' check, the archived and lag maps: ~14 commands), where a plain
 * board's field is two. A write's drain takes EXPIRE_CHUNK fields' worth of a plain board's work, each
 * field weighed at what the board's options run for it (actor_lib's drained_weight), so the write on
 * the groups board drains fewer fields in about the commands the plain board's write runs, and the
 * writes after it drain the rest. The segments the write names drain from what the board's windows left,
 * each field weighed as its board window's (a segment's views run for it as the board's do). Counted
 * without a clock, from the commands each FCALL's script ran (SLOWLOG at 0 µs).
 */
describe("a write's drain of an expired slot, weighed by what its board's options run (single)", () => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  const started = useOwnServerRanking(clock);

  beforeAll(async () => {
    const { ranking } = started();
    for (const [name, groups] of [
      ['plain', false],
      ['grouped', true],
    ] as const) {
      await ranking.putBoard({ name, windows: WINDOWS, groups });
      const entries = Array.from({ length: ITEMS }, (_, n) => ({
        item: `i${n}`,
        amount: 1 + n,
        ...(groups ? { group: `g${n % 10}` } : {}),
      }));
      await ranking.incrementBatch(commands.batch({ board: name, entries }));
    }
    clock.advanceMs(2 * 3_600_000);
  }, 60_000);

  /**
   * The commands of the write call of one increment on `board` (naming `segments`), and the drained fields
   * (ZINCRBY of a negative amount).
   */
  async function write(
    board: string,
    item: string,
    segments?: string[],
  ): Promise<{ commands: number; drained: number }> {
    const { ranking, node } = started();
    await logEveryCommand(node);
    const group = board.includes('grouped') ? 'g1' : undefined;
    await ranking.increment(commands.increment({ board, item, amount: 1, group, segments }));
    const calls = (await loggedCalls(node)).filter(({ call }) => /_increment$/.test(String(call[1])));
    await stopLoggingEveryCommand(node);
    const [counted] = calls.map(({ commands: run }) => ({
      commands: run.length,
      drained: run.filter(([name, , amount]) => name.toLowerCase() === 'zincrby' && Number(amount) < 0).length,
    }));
    return counted;
  }

  it('drains fewer fields of the groups board in about the commands of the plain one, and the writes drain it to the end', async () => {
    const plain = await write('plain', 'new');
    expect(plain.drained).toBe(EXPIRE_CHUNK);
    const grouped = await write('grouped', 'new');
    // Before: 100 fields in 1 420 commands (the plain board's 100 in 314); now 20 in 300.
    expect(grouped.drained).toBeGreaterThan(0);
    expect(grouped.drained).toBeLessThan(EXPIRE_CHUNK / 2);
    expect(grouped.commands).toBeLessThanOrEqual(2 * plain.commands);
    let writes = 1;
    for (let drained = grouped.drained; drained > 0 && writes < 50; writes++)
      ({ drained } = await write('grouped', `new${writes}`));
    expect(writes).toBeLessThan(50);
    const { ranking } = started();
    const top = await ranking.top('grouped', 'm', 0, 100);
    expect(top.items.map(({ item }) => item).sort()).toEqual(
      ['new', ...Array.from({ length: writes - 1 }, (_, n) => `new${n + 1}`)].sort(),
    );
  }, 120_000);

  /**
   * Puts `name` with a segment s0 (its windows' changes read by `views`, as the board's are) and ITEMS in its
   * slot, in batches (a batch of ITEMS weighs too much with segments).
   */
  async function segmentBoard(name: string, views: readonly object[]): Promise<void> {
    const { ranking } = started();
    await ranking.putBoard({ name, windows: WINDOWS, views: [...views], ...segmentsOf({ max: 10 }) } as never);
    const entries = Array.from({ length: ITEMS }, (_, n) => ({ item: `i${n}`, amount: 1 + n, segments: ['s0'] }));
    for (let k = 0; k < ITEMS; k += 20)
      await ranking.incrementBatch(commands.batch({ board: name, entries: entries.slice(k, k + 20) }));
  }

  /** Drains the expired slot of the board's windows by writes naming no segment: s0's is left to drain. */
  async function drainBoard(name: string): Promise<void> {
    for (let writes = 0, drained = 1; drained > 0 && writes < 50; writes++)
      ({ drained } = await write(name, `b${writes}`));
  }

  it("weighs a segment's drained fields as its board window's: the segment drain of a board of views in about a plain one's commands", async () => {
    await segmentBoard('segplain', []);
    await segmentBoard('segviews', SEGMENT_VIEWS);
    clock.advanceMs(2 * 3_600_000);
    await drainBoard('segplain');
    await drainBoard('segviews');
    const plain = await write('segplain', 'new', ['s0']);
    expect(plain.drained).toBe(EXPIRE_CHUNK);
    const viewed = await write('segviews', 'new', ['s0']);
    // Before: the segment's 100 fields in 1 141 commands (the plain board's in 323); now 25 in 316.
    expect(viewed.drained).toBeGreaterThan(0);
    expect(viewed.drained).toBeLessThan(EXPIRE_CHUNK / 2);
    expect(viewed.commands).toBeLessThanOrEqual(2 * plain.commands);
  }, 120_000);
});
