import { FakeClock } from '../../../harness/clock';
import { startRankingService } from '../../../harness/ranking';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { validateConfig } from '../../../src/common/config';
import { coalescedWork } from '../../../src/ranking/core/write-cost';
import type { ViewInput } from '../../../src/ranking/options/views/trending-math';
import type { RankingService } from '../../../src/ranking/ranking.service';
import type { RedisFunctions } from '../../../src/redis/redis-functions';

const T0 = 1_700_000_000_000;
const BOUND = validateConfig({}).WRITE_COST_PER_CALL;
const WINDOWS = Array.from({ length: 8 }, (_, w) => ({ name: `w${w}`, period: `${w + 1}h`, interval: '1m' }));
/** Eight views of every mode a board without actors may declare, over two windows. */
const VIEWS: ViewInput[] = [
  { name: 'fading', mode: 'decay', window: 'w0', halfLife: '30m' },
  { name: 'daily', mode: 'decay', window: 'w1', halfLife: '2h' },
  { name: 'weekly', mode: 'decay', window: 'w7', halfLife: '12h' },
  { name: 'hot', mode: 'hot', window: 'w1', tau: '12h' },
  { name: 'hotm', mode: 'hot', window: 'w0' },
  { name: 'hots', mode: 'hot', window: 'w7', tau: '1h' },
  { name: 'rising', mode: 'rising', window: 'w0', baseline: 'w1' },
  { name: 'risingh', mode: 'rising', window: 'w0', baseline: 'w1', minCount: 2 },
];
/** Requests sent together: as many as one call took before. */
const REQUESTS = 24;
/** The requests one coalesced call carries on that board now (coalescedWork: 186 units each), 64 before (entryWork: 28). */
const PER_CALL = 9;

/**
 * A coalesced call on a board of 8 windows and 8 views weighs what each request runs inside Redis
 * (issue #45): a request's ranks and views in every window, not only its batch entry's units, so the
 * coalescer closes a call of 1 800 units at PER_CALL requests (bench/write-instructions.ts, 8 windows and
 * 8 views: 9 existing items a call ran 8.8-8.9 M instructions, the 64 it carried before 59 M). Every
 * request is applied once, in order, with its own answer.
 */
describe.each(TOPOLOGIES)('a coalesced call within its work, 8 windows and 8 views (%s)', (topology) => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let ranking: RankingService;
  let functions: RedisFunctions;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    const started = await startRankingService(redis, clock, { WRITE_COALESCE_MS: '1' });
    ({ ranking, functions } = started);
    stop = () => started.redisService.onApplicationShutdown();
  });
  afterAll(async () => {
    await stop();
    await redis.stop();
  });

  /** The requests each increment call carried while `send` ran (a lone increment's call: 1). */
  async function requestsPerCall(send: () => Promise<unknown>): Promise<number[]> {
    const counted: number[] = [];
    const call = functions.call.bind(functions);
    functions.call = ((fn, input) => {
      if (/increments?$/.test(fn.redisName)) counted.push((input as { requests?: unknown[] }).requests?.length ?? 1);
      return call(fn, input);
    }) as typeof call;
    try {
      await send();
    } finally {
      functions.call = call;
    }
    return counted;
  }

  it('closes a call at its work: each request applied once, in order, its key replayed with its own answer', async () => {
    await ranking.putBoard({ name: 'views8', windows: WINDOWS, views: VIEWS });
    expect(Math.floor(BOUND / coalescedWork({}, { windows: WINDOWS, views: VIEWS }))).toBe(PER_CALL);
    await ranking.increment('views8', 'warm', 1); // the config cached: the requests below start together
    let answers: Awaited<ReturnType<RankingService['increment']>>[] = [];
    const calls = await requestsPerCall(async () => {
      answers = await Promise.all(
        Array.from({ length: REQUESTS }, (_, r) =>
          r % 2 === 0
            ? ranking.increment('views8', 'x', 1, r === 10 ? 'key-x' : undefined)
            : ranking.increment('views8', `y${r}`, r),
        ),
      );
    });
    const full = Math.floor(REQUESTS / PER_CALL);
    expect(calls).toEqual([...Array<number>(full).fill(PER_CALL), REQUESTS - full * PER_CALL]);
    // x's requests one after another: the n-th one's own score is n in every window.
    const xScores = answers.filter((_, r) => r % 2 === 0).map((a) => WINDOWS.map((w) => a.body.windows[w.name].score));
    expect(xScores).toEqual(Array.from({ length: REQUESTS / 2 }, (_, n) => WINDOWS.map(() => n + 1)));
    expect(answers.filter((_, r) => r % 2 === 1).map((a) => a.body.windows.w0.score)).toEqual(
      Array.from({ length: REQUESTS / 2 }, (_, n) => 2 * n + 1),
    );
    expect(answers.some((a) => a.replayed)).toBe(false);
    for (const w of WINDOWS) expect((await ranking.item('views8', w.name, 'x')).score).toBe(REQUESTS / 2);
    // The keyed request was applied once: its repeat replays its own answer.
    const again = await ranking.increment('views8', 'x', 1, 'key-x');
    expect([again.replayed, again.body]).toEqual([true, answers[10].body]);
    expect((await ranking.item('views8', 'w0', 'x')).score).toBe(REQUESTS / 2);
  });
});
