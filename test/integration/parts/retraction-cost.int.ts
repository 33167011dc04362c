import { AppConfig, validateConfig } from '../../../src/common/config';
import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { RetractionKind, RetractionStore } from '../../../src/ranking/retraction/retraction.store';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis } from '../../../harness/redis';

const T0 = 1_700_000_000_000;
const SEGMENTS = 600;
const WINDOWS = [
  { name: 'hour', period: '1h', interval: '1m', snapshots: { keep: 10, top: 100 } },
  { name: 'day', period: '1d', interval: '1h' },
];
const VIEWS = [{ name: 'people', mode: 'unique', window: 'hour' }];
/**
 * Most Redis commands one step may run: what a write call may (0.8 a cost unit of WRITE_COST_PER_CALL, the
 * worst-case harness's WRITE_CALL_COMMANDS), whatever the board's windows, views and segments.
 */
const COMMANDS_PER_STEP = Math.ceil(new AppConfig().WRITE_COST_PER_CALL * 0.8);

/**
 * A step of a retraction stays within its units however many segments the shard holds: on a board of
 * SEGMENTS segments × 2 windows, where the retracted actor or item is in one segment only, no step looks
 * into every segment's windows (the cause of steps of 35–155 ms at the documented maxima), and the
 * retraction still reaches the segment that holds it.
 */
describe('the work of a retraction step on a board of many segments (single)', () => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  let redis: TestRedis;
  let config: AppConfig;
  let service: RedisService;
  let graph: RankingGraph;
  let store: RetractionStore;

  beforeAll(async () => {
    redis = await startTestRedis('single');
    config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    service = new RedisService(RedisSettings.from(config), clock);
    await service.waitUntilReady(10_000);
    const functions = new RedisFunctions(service);
    graph = await composeRanking(service, functions, config, clock);
    store = graph.module.get(RetractionStore);
    await graph.ranking.putBoard({
      name: 'c',
      windows: WINDOWS,
      views: VIEWS,
      actors: true,
      segmentsMax: SEGMENTS + 10,
    });
    for (let first = 0; first < SEGMENTS; first += 8) {
      const segments = Array.from({ length: 8 }, (_, k) => `s${first + k}`);
      const entries = [{ item: `i${first % 13}`, amount: 1, actor: 'other', segments }];
      await graph.ranking.incrementBatch(commands.batch({ board: 'c', entries }));
    }
    const entries = [1, 2, 3].map((n) => ({ item: 'target', amount: n, actor: 'spam', segments: ['s5'] }));
    await graph.ranking.incrementBatch(commands.batch({ board: 'c', entries }));
  });

  afterAll(async () => {
    await service.onApplicationShutdown();
    await redis.stop();
  });

  /** Commands Redis ran (INFO commandstats, every command): this connection's only, one at a time. */
  async function commandsRun(): Promise<number> {
    const info = await redis.client.info('commandstats');
    return [...info.matchAll(/calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  }

  async function stepsUntilDone(kind: RetractionKind, target: string, id: string): Promise<number[]> {
    const board = await graph.cache.get('c');
    const shard = board.shards[0];
    const perStep: number[] = [];
    for (let done = false; !done && perStep.length < 100;) {
      const before = await commandsRun();
      const reply = await store.step(kind, board, shard, {
        id,
        target,
        most: store.stepUnits,
        ledgerWindow: 1,
        blockUntilMs: 0,
        blockKey: target,
        nowMs: clock.nowMs(),
      });
      // Less the INFO of `before` and the FCALL itself.
      perStep.push((await commandsRun()) - before - 2);
      done = reply.done;
    }
    return perStep;
  }

  it("an actor's retraction: each step runs at most COMMANDS_PER_STEP commands, and the segment holding it is reached", async () => {
    const perStep = await stepsUntilDone('actor', 'spam', 'r-actor');
    expect(Math.max(...perStep)).toBeLessThanOrEqual(COMMANDS_PER_STEP);
    const top = await graph.ranking.top('c', 'hour', 0, 10, { segment: 's5' });
    expect(top.items.map((row) => row.item)).not.toContain('target');
  });

  it("an item's retraction: each step runs at most COMMANDS_PER_STEP commands, and the segment holding it is reached", async () => {
    await graph.ranking.incrementBatch(
      commands.batch({ board: 'c', entries: [{ item: 'gone', amount: 4, actor: 'a', segments: ['s7'] }] }),
    );
    const perStep = await stepsUntilDone('item', 'gone', 'r-item');
    expect(Math.max(...perStep)).toBeLessThanOrEqual(COMMANDS_PER_STEP);
    const top = await graph.ranking.top('c', 'hour', 0, 10, { segment: 's7' });
    expect(top.items.map((row) => row.item)).not.toContain('gone');
  });
});
