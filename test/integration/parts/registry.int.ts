import { Command } from 'ioredis';
import { ConflictError, NotFoundError } from '../../../src/common/errors';
import { RankingService } from '../../../src/ranking/ranking.service';
import { RankingKeys } from '../../../src/ranking/core/ranking.keys';
import { RedisClient, RedisService } from '../../../src/redis/redis.service';
import { FakeClock } from '../../../harness/clock';
import { startRankingService } from '../../../harness/ranking';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';

const WINDOWS = [{ name: 'm', period: 60, interval: 10 }];
/** A scheduler pass's options (the defaults of the configuration). */
const PASS = { leaseMs: 30_000, claimBatch: 100 };

/** Deterministic pseudo-random numbers, so a failure can be replayed. */
function lcg(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/**
 * Holds the first command of `client` that `matches` until release() (then sends it); `reached` resolves
 * once it is held. Commands go through sendCommand only without auto-pipelining.
 */
function holdCommand(client: RedisClient, matches: (command: Command) => boolean) {
  const original = client.sendCommand.bind(client) as (command: Command, ...rest: unknown[]) => unknown;
  let reached!: () => void;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  client.sendCommand = (command: Command, ...rest: unknown[]) => {
    if (!matches(command)) return original(command, ...rest);
    client.sendCommand = original;
    reached();
    void released.then(() => original(command, ...rest));
    return command.promise;
  };
  return { reached: held, release };
}

const isScript = (command: Command) => ['evalsha', 'eval', 'fcall', 'fcall_ro'].includes(command.name);

describe.each(TOPOLOGIES)('board registry under racing PUT and DELETE (%s)', (topology) => {
  let redis: TestRedis;
  let keys: RankingKeys;
  const clock = new FakeClock(1_700_000_000_000);
  const started: RedisService[] = [];

  /** Two instances on the file's Redis (separate connections, same prefix). */
  async function twoInstances(env: Record<string, string> = {}) {
    const instances = await Promise.all([0, 1].map(() => startRankingService(redis, clock, env)));
    started.push(...instances.map((i) => i.redisService));
    return instances;
  }

  /** Boards among `names` whose config exists, and the registry. */
  async function state(names: string[]) {
    const existing: string[] = [];
    for (const name of names) if (await redis.client.hexists(keys.board(name).cfg(), 'windows')) existing.push(name);
    return { existing: existing.sort(), listed: await redis.client.zrange(keys.boardRegistry(), 0, -1) };
  }

  async function expectEveryBoardListed(names: string[], ranking: RankingService): Promise<void> {
    const { existing, listed } = await state(names);
    expect(listed).toEqual(expect.arrayContaining(existing));
    const page = await ranking.listBoards({ limit: 1000, offset: 0 });
    expect(page.boards.map((b) => b.name)).toEqual(existing);
    expect(page.total).toBe(listed.length);
  }

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    keys = new RankingKeys(redis.prefix);
  });
  afterAll(async () => {
    await Promise.all(started.map((service) => service.onApplicationShutdown()));
    await redis.stop();
  });
  beforeEach(() => redis.clear());

  describe('in the bad orders, one step at a time', () => {
    let a: RankingService;
    let b: RankingService;
    let bClient: RedisClient;
    let aClient: RedisClient;

    beforeAll(async () => {
      const [first, second] = await twoInstances({ REDIS_AUTO_PIPELINING: 'false' });
      [a, aClient, b, bClient] = [first.ranking, first.redisService.client, second.ranking, second.redisService.client];
    });

    it('a DELETE that unlists after a racing PUT re-created the board lists it again', async () => {
      await a.putBoard({ name: 'x', windows: WINDOWS });
      const zrem = holdCommand(bClient, (command) => command.name === 'zrem');
      const deleting = b.deleteBoard('x');
      await zrem.reached; // the board's keys are gone, the registry entry not yet
      expect((await a.putBoard({ name: 'x', windows: WINDOWS })).created).toBe(true);
      zrem.release();
      await deleting;
      expect(await state(['x'])).toEqual({ existing: ['x'], listed: ['x'] });
      await expectEveryBoardListed(['x'], b);
    });

    it('a PUT that creates the board after a racing DELETE unlisted it lists it again', async () => {
      await a.putBoard({ name: 'y', windows: WINDOWS });
      const boardPut = holdCommand(aClient, isScript);
      const putting = a.putBoard({ name: 'y', windows: WINDOWS });
      await boardPut.reached; // listed, not yet written
      await b.deleteBoard('y');
      expect(await state(['y'])).toEqual({ existing: [], listed: [] });
      boardPut.release();
      expect((await putting).created).toBe(true);
      expect(await state(['y'])).toEqual({ existing: ['y'], listed: ['y'] });
    });

    it("the scheduler's removal of a listed name without a board keeps a board a racing PUT created", async () => {
      // Left by a PUT that failed half way, and due (as the sweep enters every registered name).
      const leftBehind = () =>
        Promise.all([redis.client.zadd(keys.boardRegistry(), 0, 'z'), redis.client.zadd(keys.dueIndex(), 0, 'z')]);
      await leftBehind();
      const zrem = holdCommand(bClient, (command) => command.name === 'zrem');
      const expiring = b.expireDue(PASS);
      await zrem.reached; // the scheduler found no config for "z"
      await a.putBoard({ name: 'z', windows: WINDOWS });
      zrem.release();
      expect((await expiring).failures).toBe(0);
      expect(await state(['z'])).toEqual({ existing: ['z'], listed: ['z'] });
      // With no board, the scheduler does remove the name.
      await a.deleteBoard('z');
      await leftBehind();
      await b.expireDue(PASS);
      expect(await state(['z'])).toEqual({ existing: [], listed: [] });
    });
  });

  it('lists every existing board after many racing PUTs, DELETEs, increments and scheduler passes from two instances', async () => {
    const [a, b] = (await twoInstances()).map((i) => i.ranking);
    const boards = [
      { name: 'r0', shards: 1 },
      { name: 'r1', shards: 1 },
      { name: 'r2', shards: 3 },
    ];
    const names = boards.map((board) => board.name);
    const random = lcg(7);
    const tolerated = (error: unknown) => {
      // A board deleted under a request, or a sharded board caught half written: answered as 404 / 409.
      if (!(error instanceof NotFoundError || error instanceof ConflictError)) throw error;
    };
    for (let round = 0; round < 40; round++) {
      const pending: Array<Promise<unknown>> = [];
      for (const board of boards) {
        for (const service of [a, b]) {
          const choice = random();
          const delay = Math.floor(random() * 3);
          const op = async () => {
            for (let i = 0; i < delay; i++) await redis.client.ping(); // vary the interleaving
            if (choice < 0.45) await service.putBoard({ name: board.name, windows: WINDOWS, shards: board.shards });
            else if (choice < 0.9) await service.deleteBoard(board.name);
            else await service.increment(board.name, `item-${round}`, 1);
          };
          pending.push(op().catch(tolerated));
        }
      }
      if (round % 4 === 0) pending.push((random() < 0.5 ? a : b).expireDue(PASS));
      await Promise.all(pending);
      await expectEveryBoardListed(names, a);
    }
  });
});
