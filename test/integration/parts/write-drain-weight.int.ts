import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';
import { AppConfig } from '../../../src/common/config';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../../support/slowlog';

const T0 = 1_700_000_040_000;
/** Items of the expired slot: more than one write's drain takes (EXPIRE_CHUNK fields a plain board). */
const ITEMS = 300;
const EXPIRE_CHUNK = new AppConfig().EXPIRE_CHUNK;
const WINDOWS = [{ name: 'm', period: '1h', interval: '1m' }];

/**
 * A write's drain of an expired slot (issue #45, the worst-case harness's "an existing item of the head
 * moved to another group on 64 shards" at full size, after the seeding's 100 minutes: 1 422 commands,
 * 13.3 ms): every field it drains on a `groups: true` board takes its item out of the groups map (the
 * map, its reverse, the kept listings' check, the archived and lag maps: ~14 commands), where a plain
 * board's field is two. A write's drain takes EXPIRE_CHUNK fields' worth of a plain board's work, each
 * field weighed at what the board's options run for it (actor_lib's drained_weight), so the write on
 * the groups board drains fewer fields in about the commands the plain board's write runs, and the
 * writes after it drain the rest. Counted without a clock, from the commands each FCALL's script ran
 * (SLOWLOG at 0 µs).
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

  /** The commands of the write call of one increment on `board`, and the drained fields (ZINCRBY of a negative amount). */
  async function write(board: string, item: string): Promise<{ commands: number; drained: number }> {
    const { ranking, node } = started();
    await logEveryCommand(node);
    await ranking.increment(
      commands.increment({ board, item, amount: 1, group: board === 'grouped' ? 'g1' : undefined }),
    );
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
});
