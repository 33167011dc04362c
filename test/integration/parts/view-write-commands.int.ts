import { useRankingService } from '../../../harness/ranking';
import { TOPOLOGIES } from '../../../harness/redis';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { commandCalls, resetCommandStats } from '../../support/slowlog';

/**
 * Issue #45's single writes on the board of every option (the harness's `wc-sum` rows "new item, new actor" and
 * "new user"), here on two windows (the most the write bound takes beside the rest), a decay and a rising view,
 * `ties: first`, actors and segments: the commands each one's call runs by name (INFO commandstats, reset before
 * each). One HINCRBY takes the board windows' tie numbers, the views rescore from what the write just wrote, a
 * like indexes only a slot the shard does not know (in a segment's windows, a slot whose hash held the item already
 * is not indexed again), and its new pair is told by one HMGET of the pairs hash and written with its count in one
 * HSET.
 */
const T0 = 1_700_006_400_000;
const WINDOWS = [
  { name: 'h', period: '1h', interval: '1m' },
  { name: 'd', period: '1d', interval: '1h' },
];
const VIEWS = [
  { name: 'fading', mode: 'decay', window: 'h', halfLife: '30m' },
  { name: 'rising', mode: 'rising', window: 'h', baseline: 'd' },
];
const NAMES = ['hincrby', 'hget', 'zscore', 'exists', 'hmget', 'hset', 'zadd'] as const;
/** Those commands' calls, by topology (each measured: the two differ in the calls around the write's). */
const INCREMENT = {
  single: { hincrby: 15, hget: 8, zscore: 6, exists: 4, hmget: 4, hset: 8, zadd: 18 },
  cluster: { hincrby: 15, hget: 12, zscore: 6, exists: 4, hmget: 4, hset: 9, zadd: 18 },
};
const LIKE = {
  single: { hincrby: 7, hget: 4, zscore: 9, exists: 0, hmget: 8, hset: 15, zadd: 21 },
  cluster: { hincrby: 7, hget: 8, zscore: 9, exists: 0, hmget: 8, hset: 16, zadd: 21 },
};

describe.each(TOPOLOGIES)(
  'the commands of a write on a board with views, ties, actors and segments (%s)',
  (topology) => {
    const setup = useRankingService(topology);
    const commands = new WriteCommands(setup.clock);

    async function counted(write: () => Promise<unknown>): Promise<Record<string, number>> {
      await resetCommandStats(setup.redis.client);
      await write();
      const counts: Record<string, number> = {};
      for (const name of NAMES) counts[name] = await commandCalls(setup.redis.client, name);
      return counts;
    }

    beforeAll(async () => {
      setup.clock.setMs(T0);
      await setup.ranking.putBoard({
        name: 'b',
        windows: WINDOWS,
        views: VIEWS as never,
        ties: 'first',
        actors: true,
        segmentsMax: 100,
      });
      // Every window, pairs hash and segment holds data before the measured writes.
      for (let n = 0; n < 4; n++)
        await setup.ranking.increment(
          commands.increment({ board: 'b', item: `i${n}`, amount: 5 - n, actor: `a${n}`, segments: ['s'] }),
        );
    });

    it('a new item with a new actor in a segment', async () => {
      const write = () =>
        setup.ranking.increment(
          commands.increment({ board: 'b', item: 'new', amount: 2, actor: 'fresh', segments: ['s'] }),
        );
      expect(await counted(write)).toEqual(INCREMENT[topology]);
    });

    it('a like of a new user in a segment', async () => {
      const like = () =>
        setup.ranking.like(commands.like({ board: 'b', item: 'i1', userId: 'u-new', segments: ['s'] }));
      expect(await counted(like)).toEqual(LIKE[topology]);
    });
  },
);
