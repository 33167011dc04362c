import { FakeClock } from '../../../harness/clock';
import { TIMEOUT_MESSAGE } from '../../../src/common/redis-errors';
import { RedisService } from '../../../src/redis/redis.service';
import { RankingScheduler } from '../../../src/ranking/expiry/ranking.scheduler';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { useRankingGraph } from '../../support/ranking-graph';

const T0 = 1_700_000_000_000;
const BOARDS = ['a', 'stalled', 'c'];
const PASS = { leaseMs: 30_000, claimBatch: 100 };

/**
 * A scheduler pass on a stalled host (issue #45, the harness's `JOB ranking-expiry` row at load 7-14):
 * an expire call held past REDIS_COMMAND_TIMEOUT_MS failed its board's visit, and the pass counted a
 * failure (the harness's 500). A visit whose call timed out is now due again on the next pass and not a
 * failure of the pass: the other boards are expired in the same pass, and the next pass expires it.
 * The timeout is the store's answer for the one board (Redis does not stall one board's calls alone).
 */
describe('a scheduler pass in which one board times out (single)', () => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  const world = useRankingGraph('single', clock, {});

  beforeAll(async () => {
    const { ranking } = world.graph;
    for (const name of BOARDS) {
      await ranking.putBoard({ name, windows: [{ name: 'm', period: '1h', interval: '1m' }] });
      await ranking.incrementBatch(commands.batch({ board: name, entries: [{ item: 'i', amount: 1 }] }));
    }
    clock.advanceMs(2 * 3_600_000);
  });

  /** Items the board's window results hold, read without the lazy expiry of a read. */
  const stored = async (name: string) =>
    world.redis.client.zcard(`{${world.graph.module.get(RedisService).prefix}board:${name}}:m:top`);

  it('expires the other boards, counts no failure, and expires that board on the next pass', async () => {
    const store = world.graph.expiryStore;
    const expire = store.expire.bind(store);
    const stalled = jest
      .spyOn(store, 'expire')
      .mockImplementation((board, nowMs) =>
        board.config.name === 'stalled' ? Promise.reject(new Error(TIMEOUT_MESSAGE)) : expire(board, nowMs),
      );
    // The pass as the job runs it (the harness's row reads its failures).
    const scheduler = world.graph.module.get(RankingScheduler);
    expect(await scheduler.tick()).toMatchObject({ visited: 3, failures: 0, timedOut: 1 });
    expect(scheduler.stats).toMatchObject({ failures: 0, backlog: 1 });
    expect([await stored('a'), await stored('stalled'), await stored('c')]).toEqual([0, 1, 0]);
    stalled.mockRestore();
    clock.advanceMs(1_000);
    expect(await world.graph.ranking.expireDue(PASS)).toMatchObject({ visited: 1, failures: 0, timedOut: 0 });
    expect(await stored('stalled')).toBe(0);
  });
});
