import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking, useRankingService } from '../../../harness/ranking';
import { TOPOLOGIES } from '../../../harness/redis';
import {
  commandCalls,
  loggedCalls,
  logEveryCommand,
  resetCommandStats,
  stopLoggingEveryCommand,
} from '../../support/slowlog';

const SEGMENTS = 12;
const WINDOWS = [
  { name: 'a', period: 3600, interval: 60 },
  { name: 'b', period: 7200, interval: 60 },
  { name: 'c', period: 86_400, interval: 3600 },
];

/**
 * A segments page reads the live ends and due times of the names it looks at together (one ZMSCORE
 * each), so a listed segment costs its windows' counts only (issue #45: the Lua and commands per
 * segment of a segment_page call).
 */
describe.each(TOPOLOGIES)('a segments page sends a count per window of each segment, and no more (%s)', (topology) => {
  const world = useRankingService(topology);

  beforeAll(async () => {
    world.clock.setMs(1_700_000_000_000);
    await world.ranking.putBoard({ name: 'segcmd', windows: WINDOWS, segmentsMax: 100 });
    const entries = Array.from({ length: 3 * SEGMENTS }, (_, n) => ({
      item: `i${n}`,
      amount: 1 + n,
      segments: [`s${String(n % SEGMENTS).padStart(2, '0')}`],
    }));
    await world.ranking.incrementBatch('segcmd', entries);
    // The first page indexes the names; the one measured reads them as every later page does.
    await world.ranking.listSegments('segcmd', { offset: 0, limit: SEGMENTS });
  });

  it('lists every segment with one ZCOUNT per window each, two ZMSCORE for the names read and no ZSCORE', async () => {
    await resetCommandStats(world.redis.client);
    const page = await world.ranking.listSegments('segcmd', { offset: 0, limit: SEGMENTS });
    expect(page.segments).toEqual(
      Array.from({ length: SEGMENTS }, (_, k) => ({ name: `s${String(k).padStart(2, '0')}`, items: 3 })),
    );
    const calls = (command: string) => commandCalls(world.redis.client, command);
    expect(await calls('zscore')).toBe(0);
    expect(await calls('zcount')).toBe(SEGMENTS * WINDOWS.length);
    // The names in one read (the units cover them all): their live ends and due times in one ZMSCORE each.
    expect(await calls('zrange')).toBe(1);
    expect(await calls('zmscore')).toBe(2);
  });
});

/** Views of the window, each run for a segment's drained field as for the board's (~3 commands a view). */
const DRAINED_VIEWS = [
  { name: 'fading', mode: 'decay', window: 'm', halfLife: '30m' },
  { name: 'slow', mode: 'decay', window: 'm', halfLife: '2h' },
  { name: 'hotm', mode: 'hot', window: 'm' },
];
/** Items of each segment's expired slot: more than a call's drain takes (EXPIRE_CHUNK fields on a plain board). */
const EXPIRED_ITEMS = 300;

/**
 * A segments page drains a due segment before it counts it (segment_list_lib): each drained field is
 * weighed as its board window's (drain_lib's drained_weight), as a write's drain of the segment is, so a
 * page on a board whose views run for every drained field drains fewer of them in about the commands of
 * a plain board's page (before: EXPIRE_CHUNK fields whatever they ran). Counted without a clock, from the
 * commands each FCALL's script ran (SLOWLOG at 0 µs).
 */
describe("a segments page's drain of an expired segment slot, weighed by what its board's views run (single)", () => {
  const clock = new FakeClock(1_700_000_040_000);
  const started = useOwnServerRanking(clock);

  /** The commands of the page's segment_page calls on `board`, the first page after the slot expired. */
  async function pageCommands(board: string): Promise<number> {
    const { ranking, node } = started();
    await logEveryCommand(node);
    const page = await ranking.listSegments(board, { offset: 0, limit: 10 }).catch(() => undefined);
    const calls = (await loggedCalls(node)).filter(({ call }) => /_segment_page$/.test(String(call[1])));
    await stopLoggingEveryCommand(node);
    expect(page?.segments.map(({ items }) => items) ?? []).not.toContain(EXPIRED_ITEMS);
    expect(calls.length).toBeGreaterThan(0);
    return Math.max(...calls.map(({ commands }) => commands.length));
  }

  it('runs about the commands of a plain board in each call', async () => {
    const { ranking } = started();
    for (const [name, views] of [
      ['plain', []],
      ['viewed', DRAINED_VIEWS],
    ] as const) {
      await ranking.putBoard({
        name,
        windows: [{ name: 'm', period: '1h', interval: '1m' }],
        views,
        segmentsMax: 10,
      } as never);
      const entries = Array.from({ length: EXPIRED_ITEMS }, (_, n) => ({
        item: `i${n}`,
        amount: 1 + n,
        segments: ['s0'],
      }));
      for (let k = 0; k < EXPIRED_ITEMS; k += 20) await ranking.incrementBatch(name, entries.slice(k, k + 20));
    }
    clock.advanceMs(2 * 3_600_000);
    // A live event keeps s0 listed: the pages drain its expired slot, what the write's drain left of it.
    for (const name of ['plain', 'viewed'])
      await ranking.increment(name, 'new', 1, undefined, undefined, undefined, undefined, ['s0']);
    const plain = await pageCommands('plain');
    const viewed = await pageCommands('viewed');
    // Before: the views board's call 1 120 commands (a plain board's 316); now 292.
    expect(viewed).toBeLessThanOrEqual(2 * plain);
  });
});
