import { useRankingService } from '../../../harness/ranking';
import { TOPOLOGIES } from '../../../harness/redis';
import { commandCalls, resetCommandStats } from '../../support/slowlog';

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
