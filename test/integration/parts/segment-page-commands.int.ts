import Redis from 'ioredis';
import { FakeClock } from '../../../harness/clock';
import { startRankingService } from '../../../harness/ranking';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { RankingService } from '../../../src/ranking/ranking.service';
import { RedisService } from '../../../src/redis/redis.service';
import { commandCalls } from '../../support/slowlog';

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
  const clock = new FakeClock(1_700_000_000_000);
  let redis: TestRedis;
  let started: { ranking: RankingService; redisService: RedisService };

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    started = await startRankingService(redis, clock);
    await started.ranking.putBoard({ name: 'segcmd', windows: WINDOWS, segmentsMax: 100 });
    const entries = Array.from({ length: 3 * SEGMENTS }, (_, n) => ({
      item: `i${n}`,
      amount: 1 + n,
      segments: [`s${String(n % SEGMENTS).padStart(2, '0')}`],
    }));
    await started.ranking.incrementBatch('segcmd', entries);
    // The first page indexes the names; the one measured reads them as every later page does.
    await started.ranking.listSegments('segcmd', { offset: 0, limit: SEGMENTS });
  });
  afterAll(async () => {
    await started.redisService.onApplicationShutdown();
    await redis.stop();
  });

  it('lists every segment with one ZCOUNT per window each, two ZMSCORE for the names read and no ZSCORE', async () => {
    const nodes: Redis[] = 'nodes' in redis.client ? redis.client.nodes('master') : [redis.client];
    await Promise.all(nodes.map((node) => node.config('RESETSTAT')));
    const page = await started.ranking.listSegments('segcmd', { offset: 0, limit: SEGMENTS });
    expect(page.segments).toEqual(
      Array.from({ length: SEGMENTS }, (_, k) => ({ name: `s${String(k).padStart(2, '0')}`, items: 3 })),
    );
    const calls = (command: string) => commandCalls(redis.client, command);
    expect(await calls('zscore')).toBe(0);
    expect(await calls('zcount')).toBe(SEGMENTS * WINDOWS.length);
    // The names in one read (the units cover them all): their live ends and due times in one ZMSCORE each.
    expect(await calls('zrange')).toBe(1);
    expect(await calls('zmscore')).toBe(2);
  });
});
