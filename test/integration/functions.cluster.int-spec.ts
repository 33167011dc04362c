import calculateSlot from 'cluster-key-slot';
import Redis, { Cluster } from 'ioredis';
import { validateConfig } from '../../src/common/config';
import { loadLibraries } from '../../src/redis/functions';
import { callFunction } from '../../src/redis/redis-functions';
import { RedisService } from '../../src/redis/redis.service';
import { RedisSettings } from '../../src/redis/redis.settings';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { RankingKeys } from '../../src/ranking/core/ranking.keys';
import { RANKING } from '../../src/ranking/ranking.functions';
import { RankingService } from '../../src/ranking/ranking.service';
import { CounterStore } from '../../src/counters/counters.store';
import { UNLIMITED } from '../../src/governance/growth-quota';
import { StatsStore } from '../../src/stats/stats.store';
import { COUNTERS } from '../../src/counters/counters.functions';
import { STATS } from '../../src/stats/stats.functions';
import { bucketField } from '../../src/stats/stats-math';
import { FakeClock } from '../../harness/clock';
import { clusterClient, startRedisCluster } from '../../harness/cluster';
import { testLibrary, twoWindowHeader } from '../../harness/functions';
import { rankingServiceOn } from '../../harness/ranking';
import { CountersSettings } from '../../src/counters/counters.settings';
import { StatsSettings } from '../../src/stats/stats.settings';

/** Replicas per master: the failover tests promote one. */
const REPLICAS = 1;

// A private 3-master Cluster with one replica per master: these tests flush functions and fail over,
// which must never reach a Cluster other files use (REDIS_CLUSTER_NODES is not used here).
describe('Redis Functions on a Cluster', () => {
  let server: Awaited<ReturnType<typeof startRedisCluster>>;
  let cluster: Cluster;
  const direct = new Map<string, Redis>();
  const { library, functions: fn } = testLibrary();
  const header = twoWindowHeader(1_700_000_000_000);
  /** 16 keys under 16 hash tags: spread over the three masters. */
  const keys = Array.from({ length: 16 }, (_, i) => `{fn${i}}:sum`);
  const totals = new Map<string, number>();

  /** A plain connection to one node ("host:port"), kept for the file. */
  const node = (address: string): Redis => {
    let client = direct.get(address);
    if (!client) {
      const [host, port] = address.split(':');
      direct.set(address, (client = new Redis({ host, port: Number(port) })));
    }
    return client;
  };
  const libraryNames = async (address: string) =>
    ((await node(address).function('LIST')) as unknown[][]).map((lib) => lib[1]);
  const masterOf = (key: string) => cluster.slots[calculateSlot(key)][0];
  /** Every master's replica has acknowledged what the master wrote so far (FUNCTION LOAD included): replication is asynchronous. */
  const replicasCaughtUp = () =>
    Promise.all(cluster.nodes('master').map((master) => master.call('WAIT', REPLICAS, 5000)));

  /** `batches` rounds of one add per key, all in flight together; `during` runs alongside each round. */
  async function stream(batches: number, during?: (batch: number) => Promise<unknown>): Promise<void> {
    for (let batch = 0; batch < batches; batch++) {
      const calls: Array<Promise<unknown>> = keys.map((key, i) => {
        totals.set(key, (totals.get(key) ?? 0) + i + 1);
        return callFunction(cluster, fn.add, { key, amount: i + 1, header });
      });
      if (during) calls.splice(8, 0, during(batch));
      await Promise.all(calls);
    }
  }
  async function expectTotals(): Promise<void> {
    for (const key of keys) expect(await callFunction(cluster, fn.get, key)).toBe(totals.get(key) ?? 0);
  }

  /** The replica ("host:port") of a master. */
  async function replicaOf(master: string): Promise<string> {
    const addresses = server.nodes.split(',');
    const infos = await Promise.all(addresses.map((address) => node(address).info('replication')));
    const replica = addresses[infos.findIndex((info) => info.includes(`master_port:${master.split(':')[1]}\r`))];
    expect(replica).toBeDefined();
    return replica;
  }

  /** CLUSTER FAILOVER on `replica`, answering once it is a master (CLUSTER FAILOVER answers OK before). */
  async function failOverTo(replica: string): Promise<void> {
    await node(replica).cluster('FAILOVER');
    for (let attempt = 0; attempt < 400; attempt++) {
      const role = (await node(replica).role()) as unknown[];
      if (role[0] === 'master') return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`${replica} was not promoted`);
  }

  beforeAll(async () => {
    server = await startRedisCluster([], { replicas: REPLICAS });
    cluster = clusterClient(server.nodes);
    await cluster.connect();
  });
  afterAll(async () => {
    cluster.disconnect();
    for (const client of direct.values()) client.disconnect();
    await server.stopServer();
  });

  it('loads the library on every master; each replica gets it from its master', async () => {
    expect(await loadLibraries(cluster, [library])).toBe(3);
    await replicasCaughtUp();
    for (const address of server.nodes.split(',')) expect(await libraryNames(address)).toEqual([library.name]);
    await stream(3);
    await expectTotals();
    expect(await callFunction(cluster, fn.headerEcho, header)).toMatchObject({ nowSec: 1_700_000_000 });
  });

  it('RedisFunctions on a Cluster loads its libraries on every master at init', async () => {
    await Promise.all(cluster.nodes('master').map((master) => master.function('FLUSH')));
    const config = validateConfig({ REDIS_CLUSTER_NODES: server.nodes, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    const service = new RedisService(RedisSettings.from(config), new FakeClock(0));
    const functions = new RedisFunctions(service);
    try {
      functions.define([library]);
      await functions.onModuleInit();
      expect(functions.state).toEqual({ loaded: true });
      await replicasCaughtUp();
      for (const address of server.nodes.split(',')) expect(await libraryNames(address)).toEqual([library.name]);
      expect(await functions.call(fn.headerEcho, header)).toMatchObject({ budget: 64 });
    } finally {
      await service.onApplicationShutdown();
    }
  });

  it('keeps calls succeeding when one master loses its functions under a stream of calls', async () => {
    const flushed = masterOf(keys[0]);
    await stream(10, (batch) => (batch % 3 === 0 ? node(flushed).function('FLUSH') : Promise.resolve()));
    await expectTotals();
    expect(await libraryNames(flushed)).toEqual([library.name]);
  });

  it('lets two loaders race on every master while calls run', async () => {
    const other = clusterClient(server.nodes);
    await other.connect();
    try {
      await stream(5, () => Promise.all([loadLibraries(cluster, [library]), loadLibraries(other, [library])]));
      await expectTotals();
    } finally {
      other.disconnect();
    }
  });

  it('keeps calls succeeding through a failover (CLUSTER FAILOVER on a replica), then a flush of the new master', async () => {
    const replica = await replicaOf(masterOf(keys[0]));
    await stream(4, (batch) => (batch === 1 ? failOverTo(replica) : Promise.resolve()));
    await stream(4);
    await expectTotals();
    expect(masterOf(keys[0])).toBe(replica);
    expect(await libraryNames(replica)).toEqual([library.name]); // replicated before the failover

    // A new master without the library (as after a failover to a node that never had it).
    await stream(4, (batch) => (batch === 1 ? node(replica).function('FLUSH') : Promise.resolve()));
    await expectTotals();
    expect(await libraryNames(replica)).toEqual([library.name]);
  });

  // The service's libraries the way it runs them: loaded at init, reloaded by the first call that
  // finds one missing on a node. Board "b0" lives on the master that loses its functions (FUNCTION
  // FLUSH) and then fails over, while every board takes writes and reads, and a counter and a stats
  // pair homed on that same master (tb_counters, tb_stats) take theirs.
  describe('the ranking, counters and stats libraries through the service', () => {
    const clock = new FakeClock(1_700_000_000_000);
    const boards = Array.from({ length: 6 }, (_, i) => `b${i}`);
    const expected = new Map<string, number>();
    let service: RedisService;
    let functions: RedisFunctions;
    let ranking: RankingService;
    let counters: CounterStore;
    let stats: StatsStore;
    let counted = 0;
    let recorded = 0;

    beforeAll(async () => {
      const env = { REDIS_CLUSTER_NODES: server.nodes, KEY_PREFIX: 'tb:', REDIS_COMMAND_TIMEOUT_MS: '5000' };
      const config = validateConfig(env);
      service = new RedisService(RedisSettings.from(config), clock);
      functions = new RedisFunctions(service);
      ranking = await rankingServiceOn(service, functions, config, clock);
      counters = new CounterStore(service, functions, CountersSettings.from(config));
      stats = new StatsStore(service, functions, StatsSettings.from(config));
      await Promise.all([service.onModuleInit(), functions.onModuleInit()]);
      for (const board of boards)
        await ranking.putBoard({ name: board, windows: [{ name: 'h', period: '1h', interval: '1m' }] });
    });
    afterAll(() => service.onApplicationShutdown());

    /** The first of c0, c1, ... whose key (`keyOf`) the master serving board b0 holds. */
    function homedWithB0(keyOf: (name: string) => string): string {
      const home = homeOfB0();
      const slots = (service.client as Cluster).slots;
      for (let i = 0; i < 1000; i++) if (slots[calculateSlot(keyOf(`c${i}`))][0] === home) return `c${i}`;
      throw new Error(`no name homed on ${home}`);
    }

    /** One counter increment and one stats record on b0's master (a call each, in among the ranking's). */
    function counterAndStats(): Array<Promise<unknown>> {
      const counter = homedWithB0((name) => counters.keys.knownOf(name));
      const context = homedWithB0((name) => stats.keys.current(name, 'T'));
      const nowMs = clock.nowMs();
      counted++;
      recorded++;
      return [
        counters.increment(counter, nowMs, Math.floor(nowMs / 1000), 1, UNLIMITED),
        stats.record({ context, type: 'T', nowMs, hourStart: 1_699_999_200, value: 1, histogramField: bucketField(1) }),
      ];
    }

    /** `rounds` of one increment and one top read per board, all in flight together, with `during` among them. */
    async function traffic(rounds: number, during: (round: number) => Promise<unknown>): Promise<void> {
      const counter = homedWithB0((name) => counters.keys.knownOf(name));
      const context = homedWithB0((name) => stats.keys.current(name, 'T'));
      const countedBefore = await countOf(counter);
      const recordedBefore = (await stats.read(context, 'T'))[0]?.moments.count ?? 0;
      counted = recorded = 0;
      for (let round = 0; round < rounds; round++) {
        const calls: Array<Promise<unknown>> = boards.flatMap((board, i) => {
          expected.set(board, (expected.get(board) ?? 0) + i + 1);
          return [ranking.increment(board, 'x', i + 1), ranking.top(board, 'h', 0, 10)];
        });
        calls.splice(6, 0, during(round), ...counterAndStats());
        await Promise.all(calls);
      }
      for (const board of boards) expect((await ranking.item(board, 'h', 'x')).score).toBe(expected.get(board));
      expect(await countOf(counter)).toBe(countedBefore + counted);
      expect((await stats.read(context, 'T'))[0].moments.count).toBe(recordedBefore + recorded);
    }

    /** The counter's count over its 60 s slices (the clock stands still: one slice). */
    async function countOf(counter: string): Promise<number> {
      const nowMs = clock.nowMs();
      const { samples } = await counters.read(counter, 60, nowMs, 0, Math.floor(nowMs / 1000));
      return samples.reduce((sum, sample) => sum + sample.count, 0);
    }

    /** The master serving board b0, as the service's own client knows it (it follows MOVED). */
    function homeOfB0(): string {
      if (!(service.client instanceof Cluster)) throw new Error('a Cluster client');
      return service.client.slots[calculateSlot(new RankingKeys('tb:').board('b0').cfg())][0];
    }

    it('keeps writes and reads answering while a master loses the libraries under load', async () => {
      expect(functions.state).toEqual({ loaded: true });
      const home = homeOfB0();
      await traffic(6, (round) => (round % 2 === 0 ? node(home).function('FLUSH') : Promise.resolve()));
      expect(await libraryNames(home)).toEqual(
        expect.arrayContaining([RANKING.library.name, COUNTERS.library.name, STATS.library.name]),
      );
    });

    it('keeps them answering through a failover, then a flush of the new master', async () => {
      const replica = await replicaOf(homeOfB0());
      await traffic(4, (round) => (round === 1 ? failOverTo(replica) : Promise.resolve()));
      expect(homeOfB0()).toBe(replica);
      await traffic(4, (round) => (round === 1 ? node(replica).function('FLUSH') : Promise.resolve()));
      expect(await libraryNames(replica)).toEqual(
        expect.arrayContaining([RANKING.library.name, COUNTERS.library.name, STATS.library.name]),
      );
    });
  });
});
