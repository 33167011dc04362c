import { useRankingGraph } from '../support/ranking-graph';
import { everyOptionBoard } from '../support/board-settings';
import { AppConfig } from '../../src/common/config';
import { BOARDS } from '../../harness/worst-case/boards';
import { ActorWeightsStore } from '../../src/ranking/actor-weights/actor-weights.store';
import { ALIAS_STEP_UNITS } from '../../src/ranking/aliases/aliases.service';
import { AliasesStore } from '../../src/ranking/aliases/aliases.store';
import { RetractionKind, RetractionStore } from '../../src/ranking/retraction/retraction.store';
import { adminStepUnits } from '../../src/ranking/core/write-cost';
import { WriteCommands } from '../../src/ranking/writes/write-commands';
import { FakeClock } from '../../harness/clock';

const T0 = 1_700_000_000_000;
const METRICS = BOARDS['wc-metrics'];
/** The 8-metric board of a retraction and of an alias merge, seeded alike. */
const METRIC_BOARDS = ['metrics', 'metrics-alias'];
/**
 * Batches seeded on each board, a minute apart: every minute slot of the short windows holds ITEMS items.
 * 10 leave each short window 120 expired item fields and each segment's window about 30, more than
 * EXPIRE_CHUNK in all: a drain taking EXPIRE_CHUNK fields of the board and as many of its segments
 * beside a step's units runs past COMMANDS_PER_STEP in every test here (1 449-1 789 commands a step).
 */
const BATCHES = 10;
const ITEMS = 12;
/** Past every window of a week or less (hour, six, h, wk, m): their slots all expire at once. */
const CLOCK_MOVE_MS = 8 * 86_400_000;
const WRITE_COST_PER_CALL = new AppConfig().WRITE_COST_PER_CALL;
/** What a write call may run (the worst-case harness's WRITE_CALL_COMMANDS): a step is held to it too. */
const COMMANDS_PER_STEP = Math.ceil(WRITE_COST_PER_CALL * 0.8);
const STEP_UNITS = adminStepUnits(WRITE_COST_PER_CALL);
/** Steps a job may take before the spec gives up on it. */
const MOST_STEPS = 10_000;

/**
 * An admin step first drains what expired on its shard, and that drain is part of its bound: on the
 * board of every option (8 windows, 8 views, segments, ties first, capped actors), after a clock move
 * expiring thousands of fields of contributions and items in the board's windows and its segments', no
 * step call of a retraction, a re-weighting or an alias merge runs more commands than a write call may
 * (they ran 1 600-3 000 when the drain took EXPIRE_CHUNK fields of the board and as many of its
 * segments beside the step's units); every step still ends, and what stays live stays exact.
 */
/** The segments the n-th batch names. */
function segmentsOf(n: number): string[] {
  return Array.from({ length: 8 }, (_, k) => `s${(n + k) % 30}`);
}

describe('the drain of an admin step on the board of every option, after a long clock move (single)', () => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  // The seed sends each minute's batches of six boards at once on one connection: on a loaded machine
  // (load 25) one of them waited past the 500 ms default and every test failed in beforeAll.
  const world = useRankingGraph('single', clock, { WRITE_COST_PER_CALL: '1000000', REDIS_COMMAND_TIMEOUT_MS: '10000' });

  async function seed(board: string): Promise<void> {
    await world.graph.ranking.putBoard(everyOptionBoard(board));
  }

  /** A batch of each metric on `board`, one after another: item i counted 1 + i. */
  async function metricBatches(board: string): Promise<void> {
    for (const metric of METRICS.metrics) {
      const counts = Array.from({ length: ITEMS }, (_, i) => ({ item: `i${i}`, amount: 1 + i, metric }));
      await world.graph.ranking.incrementBatch(commands.batch({ board, entries: counts }));
    }
  }

  beforeAll(async () => {
    const boards = ['actor', 'item', 'weight', 'alias'];
    for (const board of boards) await seed(board);
    for (const name of METRIC_BOARDS)
      await world.graph.ranking.putBoard({
        name,
        ...METRICS,
        windows: [...METRICS.windows],
        views: [...METRICS.views],
        metrics: [...METRICS.metrics],
      });
    for (let n = 0; n < BATCHES; n++) {
      const segments = segmentsOf(n);
      // Each item an actor of its own and the shared one; the targets live on in the 400-day window.
      const entries = Array.from({ length: ITEMS }, (_, i) => [
        { item: `i${i}`, amount: 1, actor: `a${(n + i) % 20}`, segments },
        { item: `i${i}`, amount: 2, actor: 'spam', segments },
      ]).flat();
      // The boards share no key that a write's order could change: each board's calls go in the order
      // they went one at a time, the boards' side by side (a minute's calls in flight together, not
      // 20 round trips in turn, which a loaded machine stretches most).
      await Promise.all([
        ...boards.map((board) => world.graph.ranking.incrementBatch(commands.batch({ board, entries }))),
        ...METRIC_BOARDS.map((board) => metricBatches(board)),
      ]);
      clock.advanceMs(60_000);
    }
    clock.advanceMs(CLOCK_MOVE_MS);
  }, 300_000);

  /** Commands Redis ran (INFO commandstats, every command): this connection's only, one at a time. */
  async function commandsRun(): Promise<number> {
    const info = await world.redis.client.info('commandstats');
    return [...info.matchAll(/calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  }

  /**
   * Runs `step` until done: the commands of each step (less the INFO before it and the FCALL itself;
   * one INFO between two steps is the count after the one and before the next). An actor's
   * retraction here takes ~800 steps: each drains only the fields its units pay for, each weighed at
   * what the board's options run for it (actor_lib's drained_weight), before its own work.
   */
  async function stepsUntilDone(step: (first: boolean) => Promise<{ done: boolean }>): Promise<number[]> {
    const perStep: number[] = [];
    let done = false;
    let before = await commandsRun();
    while (!done && perStep.length < MOST_STEPS) {
      done = (await step(perStep.length === 0)).done;
      const after = await commandsRun();
      perStep.push(after - before - 2);
      before = after;
    }
    expect(done).toBe(true);
    return perStep;
  }

  async function retraction(kind: RetractionKind, board: string, target: string): Promise<number[]> {
    const prepared = await world.graph.cache.get(board);
    const store = world.graph.module.get(RetractionStore);
    const step = { id: `r-${kind}`, target, most: STEP_UNITS, ledgerWindow: 2, blockUntilMs: 0, blockKey: target };
    return stepsUntilDone(() => store.step(kind, prepared, prepared.shards[0], { ...step, nowMs: clock.nowMs() }));
  }

  /** How many batches named `segment`. */
  function batchesIn(segment: string): number {
    return Array.from({ length: BATCHES }, (_, n) => segmentsOf(n).includes(segment)).filter(Boolean).length;
  }

  /** The item's score in the 400-day window (`d`), the one window still holding the seeded events. */
  async function score(board: string, item: string, segment?: string): Promise<number> {
    const top = await world.graph.ranking.top(board, 'd', 0, 1000, segment ? { segment } : {});
    return top.items.find((row) => row.item === item)?.score ?? 0;
  }

  it("an actor's retraction: every step within COMMANDS_PER_STEP, the drain included, and its events out", async () => {
    const perStep = await retraction('actor', 'actor', 'spam');
    expect(Math.max(...perStep)).toBeLessThanOrEqual(COMMANDS_PER_STEP);
    expect(await score('actor', 'i0')).toBe(BATCHES);
    expect(await score('actor', 'i3', 's5')).toBe(batchesIn('s5'));
  }, 120_000);

  it("an item's retraction: every step within COMMANDS_PER_STEP, the drain included, and the item gone", async () => {
    const perStep = await retraction('item', 'item', 'i0');
    expect(Math.max(...perStep)).toBeLessThanOrEqual(COMMANDS_PER_STEP);
    expect(await score('item', 'i0')).toBe(0);
    expect(await score('item', 'i0', 's5')).toBe(0);
    expect(await score('item', 'i1', 's5')).toBe(3 * batchesIn('s5'));
    expect(await score('item', 'i1')).toBe(3 * BATCHES);
  }, 120_000);

  it("an item's retraction on a board of 8 metrics: every step within COMMANDS_PER_STEP, every metric's windows drained and the item gone", async () => {
    const perStep = await retraction('item', 'metrics', 'i0');
    expect(Math.max(...perStep)).toBeLessThanOrEqual(COMMANDS_PER_STEP);
    for (const metric of METRICS.metrics) {
      const top = await world.graph.ranking.top('metrics', 'd', 0, 100, { metric });
      expect([metric, top.items.map((row) => [row.item, row.score])]).toEqual([
        metric,
        Array.from({ length: ITEMS - 1 }, (_, i) => [`i${ITEMS - 1 - i}`, (ITEMS - i) * BATCHES]),
      ]);
    }
  }, 120_000);

  it("an actor's re-weighting to 0: every step within COMMANDS_PER_STEP, the drain included, every event counted again", async () => {
    const prepared = await world.graph.cache.get('weight');
    const store = world.graph.module.get(ActorWeightsStore);
    let events = 0;
    const perStep = await stepsUntilDone(async (fresh) => {
      const step = { actor: 'spam', weight: 0, most: STEP_UNITS, ledgerWindow: 2, fresh, places: 0 };
      const reply = await store.step(prepared, prepared.shards[0], { ...step, nowMs: clock.nowMs() });
      events = reply.events;
      return reply;
    });
    expect(Math.max(...perStep)).toBeLessThanOrEqual(COMMANDS_PER_STEP);
    expect(events).toBe(BATCHES * ITEMS);
    expect(await score('weight', 'i0')).toBe(BATCHES);
  }, 120_000);

  it('an alias merge on one shard: every take within COMMANDS_PER_STEP, the drain included, the counts moved', async () => {
    const prepared = await world.graph.cache.get('alias');
    const store = world.graph.module.get(AliasesStore);
    let acked = 0;
    const perStep = await stepsUntilDone(async () => {
      const step = { alias: 'i0', item: 'i1', run: 'r1', most: ALIAS_STEP_UNITS / 2, fresh: true, here: true };
      const taken = await store.step(prepared, {
        ...step,
        mode: 'take',
        acked,
        seq: 0,
        chunk: '',
        nowMs: clock.nowMs(),
      });
      acked = Math.max(acked, taken.seq);
      return taken;
    });
    expect(Math.max(...perStep)).toBeLessThanOrEqual(COMMANDS_PER_STEP);
    expect(await score('alias', 'i0')).toBe(0);
    expect(await score('alias', 'i1')).toBe(6 * BATCHES);
  }, 120_000);

  it("an alias merge on a board of 8 metrics: every take within COMMANDS_PER_STEP, every metric's windows drained and moved", async () => {
    const prepared = await world.graph.cache.get('metrics-alias');
    const store = world.graph.module.get(AliasesStore);
    let acked = 0;
    const perStep = await stepsUntilDone(async () => {
      const step = { alias: 'i2', item: 'i3', run: 'r1', most: ALIAS_STEP_UNITS / 2, fresh: true, here: true };
      const taken = await store.step(prepared, {
        ...step,
        mode: 'take',
        acked,
        seq: 0,
        chunk: '',
        nowMs: clock.nowMs(),
      });
      acked = Math.max(acked, taken.seq);
      return taken;
    });
    expect(Math.max(...perStep)).toBeLessThanOrEqual(COMMANDS_PER_STEP);
    for (const metric of METRICS.metrics) {
      const top = await world.graph.ranking.top('metrics-alias', 'd', 0, 100, { metric });
      const scores = new Map(top.items.map((row) => [row.item, row.score]));
      expect([metric, scores.get('i2'), scores.get('i3')]).toEqual([metric, undefined, 7 * BATCHES]);
    }
  }, 120_000);
});
