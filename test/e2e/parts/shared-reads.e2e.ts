import request from 'supertest';
import { RankingService } from '../../../src/ranking/ranking.service';
import { ADMIN, createBoard } from '../../../harness/app';
import { useSingleNodeApp } from '../../support/e2e';

/**
 * Top pages asked in one event-loop turn share one read (src/common/shared-reads.ts): fewer calls,
 * and every answer still exact and read-your-writes.
 */
describe('shared top reads', () => {
  const e2e = useSingleNodeApp({ env: { RATE_LIMIT_PER_SEC: '0' }, fresh: true });
  const ranking = () => e2e.app().get(RankingService);

  /** Calls of the top-read function this instance sent, from its /metrics. */
  async function topReads(): Promise<number> {
    const metrics = (await request(e2e.app().getHttpServer()).get('/metrics').set(ADMIN)).text;
    const line = /^trendboard_redis_command_duration_seconds_count\{command="tbRankReadTop"\} (\d+)$/m.exec(metrics);
    return Number(line?.[1] ?? 0);
  }

  beforeEach(async () => {
    await createBoard(e2e.app(), 'b');
    await ranking().increment('b', 'a', 3);
    await ranking().increment('b', 'z', 1);
  });

  it('answers the same question asked in one turn with one read; other questions get their own', async () => {
    const before = await topReads();
    const same = Array.from({ length: 20 }, () => ranking().top('b', undefined, 0, 10));
    const other = ranking().top('b', undefined, 0, 1);
    const answers = await Promise.all(same);
    expect(await topReads()).toBe(before + 2);
    for (const answer of answers)
      expect(answer.items.map((row) => [row.item, row.score])).toEqual([
        ['a', 3],
        ['z', 1],
      ]);
    expect((await other).items.map((row) => row.item)).toEqual(['a']);
  });

  it('a read asked after a write was acknowledged sees it, even while an earlier read of the same question is under way', async () => {
    const earlier = ranking().top('b', undefined, 0, 10);
    // The earlier read's run starts at the end of this turn; the write is sent after it.
    await new Promise((resolve) => setImmediate(resolve));
    await ranking().increment('b', 'z', 5);
    const later = await Promise.all([ranking().top('b', undefined, 0, 10), ranking().top('b', undefined, 0, 10)]);
    for (const answer of later)
      expect(answer.items.map((row) => [row.item, row.score])).toEqual([
        ['z', 6],
        ['a', 3],
      ]);
    await earlier;
  });

  it('shares over HTTP too: every concurrent GET is answered in full', async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => request(e2e.app().getHttpServer()).get('/boards/b/top?limit=5')),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body.items).toEqual([
        { rank: 1, item: 'a', score: 3, previousRank: null },
        { rank: 2, item: 'z', score: 1, previousRank: null },
      ]);
    }
  });

  it('takes the time of a shared read when it runs: a window boundary passed before the run is respected', async () => {
    const asked = ranking().top('b', undefined, 0, 10);
    e2e.clock.advanceMs(3_600_000 + 60_000);
    expect((await asked).items).toEqual([]);
  });
});
