import fc from 'fast-check';
import { DomainError } from '../../../src/common/errors';
import { RankingService } from '../../../src/ranking/ranking.service';
import { RedisService } from '../../../src/redis/redis.service';
import { FakeClock } from '../../../harness/clock';
import { startRankingService } from '../../../harness/ranking';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { resetCommandStats } from '../../support/slowlog';

const WINDOWS = [
  { name: '1m', period: 60, interval: 10 },
  { name: '1h', period: 3600, interval: 600 },
];
const T0 = 1_700_000_000_000;

/** Script and function calls Redis ran since the last reset (every node of a Cluster). */
async function scriptCalls(redis: TestRedis): Promise<number> {
  const nodes = 'nodes' in redis.client ? redis.client.nodes('master') : [redis.client];
  let calls = 0;
  for (const node of nodes) {
    const stats = await node.info('commandstats');
    for (const match of stats.matchAll(/cmdstat_(?:evalsha|eval|fcall|fcall_ro):calls=(\d+)/g))
      calls += Number(match[1]);
  }
  return calls;
}

const codeOf = (settled: PromiseSettledResult<unknown>) =>
  settled.status === 'fulfilled' ? 'ok' : settled.reason instanceof DomainError ? settled.reason.code : 'other';

describe.each(TOPOLOGIES)('coalesced increments (%s)', (topology) => {
  let redis: TestRedis;
  const clock = new FakeClock(T0);
  const services: RedisService[] = [];
  let coalescing: RankingService;
  let plain: RankingService;
  let board = 0;

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    const on = await startRankingService(redis, clock, { WRITE_COALESCE_MS: '1' });
    const off = await startRankingService(redis, clock, { WRITE_COALESCE_MS: '0' });
    services.push(on.redisService, off.redisService);
    coalescing = on.ranking;
    plain = off.ranking;
  });
  afterAll(async () => {
    for (const service of services) await service.onApplicationShutdown();
    await redis.stop();
  });

  async function newBoard(shards = 1, maxItems?: number): Promise<string> {
    const name = `c${board++}`;
    await coalescing.putBoard({ name, windows: WINDOWS, shards, maxItems });
    await plain.getBoard(name);
    return name;
  }

  it('applies concurrent increments in fewer script calls, each answered with its own standing', async () => {
    const name = await newBoard();
    await coalescing.increment(name, 'warm', 1); // the config is cached: the next requests start together
    await resetCommandStats(redis.client);
    const answers = await Promise.all(Array.from({ length: 50 }, () => coalescing.increment(name, 'x', 1)));
    const calls = await scriptCalls(redis);
    expect(calls).toBeLessThan(10);
    // Applied one after another: the n-th request's own score is n.
    expect(answers.map((a) => a.body.windows['1m'].score)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(answers.every((a) => a.body.windows['1h'].rank === 1 && !a.replayed)).toBe(true);
    expect((await coalescing.item(name, '1h', 'x')).score).toBe(50);

    await resetCommandStats(redis.client);
    await Promise.all(Array.from({ length: 50 }, () => plain.increment(name, 'x', 1)));
    expect(await scriptCalls(redis)).toBeGreaterThanOrEqual(50); // WRITE_COALESCE_MS=0: one call each
  });

  it('ranks each request as of its own addition', async () => {
    const name = await newBoard();
    await coalescing.increment(name, 'warm', 1);
    // Each newcomer outscores all before it: each is first when it is added.
    const rising = await Promise.all([2, 3, 4, 5].map((amount) => coalescing.increment(name, `r${amount}`, amount)));
    expect(rising.map((a) => a.body.windows['1m'].rank)).toEqual([1, 1, 1, 1]);
    // Each newcomer scores below all before it: its rank is the count before it plus one.
    const falling = await Promise.all([-1, -2, -3].map((n) => coalescing.increment(name, `f${n}`, 1)));
    expect(falling.map((a) => a.body.windows['1m'].rank)).toEqual([5, 5, 5]); // ties with 'warm' (score 1)
  });

  it("honours each request's idempotency key inside one call", async () => {
    const name = await newBoard();
    await coalescing.increment(name, 'warm', 1);
    const same = await Promise.all([1, 2, 3].map(() => coalescing.increment(name, 'k', 4, 'key-1')));
    expect(same.map((a) => a.replayed)).toEqual([false, true, true]);
    expect(same.map((a) => a.body)).toEqual([same[0].body, same[0].body, same[0].body]);
    const reused = await Promise.allSettled([
      coalescing.increment(name, 'k', 1, 'key-2'),
      coalescing.increment(name, 'other', 1, 'key-2'),
      coalescing.increment(name, 'k', 1),
    ]);
    expect(reused.map(codeOf)).toEqual(['ok', 'IDEMPOTENCY_KEY_REUSED', 'ok']);
    expect((await coalescing.item(name, '1m', 'k')).score).toBe(6);
    expect((await coalescing.item(name, '1m', 'other')).score).toBe(0);
    // A later lone repeat replays the answer stored by the coalesced call.
    const again = await plain.increment(name, 'k', 4, 'key-1');
    expect([again.replayed, again.body]).toEqual([true, same[0].body]);
  });

  it('refuses only the requests past the board cap; the others apply', async () => {
    const name = await newBoard(1, 3);
    await coalescing.increment(name, 'held', 1);
    const settled = await Promise.allSettled(
      ['n1', 'n2', 'held', 'n3', 'n4'].map((item) => coalescing.increment(name, item, 1)),
    );
    expect(settled.map(codeOf)).toEqual(['ok', 'ok', 'ok', 'BOARD_FULL', 'BOARD_FULL']);
    expect((await coalescing.top(name, '1m', 0, 10)).items.map((row) => row.item).sort()).toEqual(['held', 'n1', 'n2']);
  });

  it('retries every request of a call refused for a changed config, each once', async () => {
    const name = await newBoard();
    await coalescing.increment(name, 'warm', 1);
    await plain.putBoard({ name, windows: [...WINDOWS, { name: '1d', period: 86_400, interval: 3600 }], shards: 1 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => coalescing.increment(name, 'y', 2)));
    expect(answers.every((a) => Object.keys(a.body.windows).length === 3)).toBe(true);
    expect((await coalescing.item(name, '1m', 'y')).score).toBe(40);
  });

  it('on a sharded board each request gets its board-wide rank', async () => {
    const name = await newBoard(4);
    await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((item, i) => coalescing.increment(name, item, 10 + i)));
    const answers = await Promise.all(
      ['a', 'b', 'c', 'd', 'e', 'f'].map((item) => coalescing.increment(name, item, 1)),
    );
    expect(answers.map((a) => a.body.windows['1m'].rank)).toEqual([6, 5, 4, 3, 2, 1]);
  });

  it("lands each request at its own `at`, and keeps the board's views, in one call", async () => {
    const name = `c${board++}`;
    await coalescing.putBoard({
      name,
      windows: [...WINDOWS, { name: '1d', period: 86_400, interval: 3600 }],
      shards: 1,
    });
    await coalescing.increment(name, 'warm', 1);
    const nowSec = T0 / 1000;
    const settled = await Promise.allSettled([
      coalescing.increment(name, 'a', 2), // now: every window
      coalescing.increment(name, 'a', 3, undefined, undefined, nowSec - 7200), // 2 h ago: only the day
      coalescing.increment(name, 'a', 5, undefined, undefined, nowSec - 120), // 2 min ago: the hour and the day
    ]);
    expect(settled.map(codeOf)).toEqual(['ok', 'ok', 'ok']);
    const scores = settled.map((s) => (s.status === 'fulfilled' ? s.value.body.windows : undefined));
    expect(scores.map((w) => [w?.['1m'].score, w?.['1h'].score, w?.['1d'].score])).toEqual([
      [2, 2, 2],
      [2, 2, 5],
      [2, 7, 10],
    ]);
  });

  it('property: concurrent rounds of keyed and plain increments answer as if applied one by one, in order', async () => {
    const request = fc.record({
      item: fc.constantFrom('a', 'b', 'c'),
      amount: fc.integer({ min: -3, max: 5 }).filter((n) => n !== 0),
      key: fc.option(fc.constantFrom('k1', 'k2', 'k3', 'k4'), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(request, { minLength: 1, maxLength: 12 }), { maxLength: 5 }),
        async (rounds) => {
          const name = await newBoard();
          await coalescing.increment(name, 'warm', 1);
          const totals = new Map<string, number>([['warm', 1]]);
          const firstOfKey = new Map<string, { item: string; amount: number; score: number }>();
          for (const round of rounds) {
            const settled = await Promise.allSettled(
              round.map((r) => coalescing.increment(name, r.item, r.amount, r.key)),
            );
            // The model: the round's requests one by one, in the order they were made.
            round.forEach((r, i) => {
              const first = r.key === undefined ? undefined : firstOfKey.get(r.key);
              const answer = settled[i];
              if (first !== undefined) {
                if (first.item === r.item && first.amount === r.amount) {
                  expect(answer.status === 'fulfilled' && answer.value.replayed).toBe(true);
                  expect(answer.status === 'fulfilled' && answer.value.body.windows['1m'].score).toBe(first.score);
                } else expect(codeOf(answer)).toBe('IDEMPOTENCY_KEY_REUSED');
                return;
              }
              const score = (totals.get(r.item) ?? 0) + r.amount;
              totals.set(r.item, score);
              if (r.key !== undefined) firstOfKey.set(r.key, { item: r.item, amount: r.amount, score });
              expect(answer.status === 'fulfilled' && answer.value.body.windows['1m'].score).toBe(score);
            });
          }
          for (const [item, total] of totals) expect((await coalescing.item(name, '1h', item)).score).toBe(total);
        },
      ),
      { numRuns: 25 },
    );
  });
});
