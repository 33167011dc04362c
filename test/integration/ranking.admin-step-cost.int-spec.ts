import { useRankingGraph } from '../support/ranking-graph';
import { everyOptionBoard } from '../support/board-settings';
import { AppConfig } from '../../src/common/config';
import { BOARDS } from '../../harness/worst-case/boards';
import { ActorWeightsStore } from '../../src/ranking/actor-weights/actor-weights.store';
import { RetractionKind, RetractionStore } from '../../src/ranking/retraction/retraction.store';
import { adminStepUnits } from '../../src/ranking/core/write-cost';
import { WriteCommands } from '../../src/ranking/writes/write-commands';
import { FakeClock } from '../../harness/clock';

const T0 = 1_700_000_000_000;
const SUM = BOARDS['wc-sum'];
/** Events of each actor, a minute apart, each in 8 segments: several steps' work for each target. */
const EVENTS = 60;
const WRITE_COST_PER_CALL = new AppConfig().WRITE_COST_PER_CALL;
/** What a write call may run (the worst-case harness's WRITE_CALL_COMMANDS): a step is held to it too. */
const COMMANDS_PER_STEP = Math.ceil(WRITE_COST_PER_CALL * 0.8);
/** A default instance's step (the board itself is past its write bound: declared as the harness's seeder does). */
const STEP_UNITS = adminStepUnits(WRITE_COST_PER_CALL);
/** Past it a target never finished (several hundred steps each at STEP_UNITS). */
const MOST_STEPS = 2000;

/**
 * A step of a retraction or a re-weighting runs no more Redis commands than a write call may, on the
 * board of every option (8 windows, 8 views, segments, ties first, capped actors), where a contribution
 * runs about 16 commands and its views a few more each (steps of 32 units ran 1 400-3 300 commands at the
 * documented maxima); and a target of several steps' work still comes out whole.
 */
describe('the commands of an admin step on the board of every option (single)', () => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  const world = useRankingGraph('single', clock, { WRITE_COST_PER_CALL: '1000000' });

  beforeAll(async () => {
    await world.graph.ranking.putBoard(everyOptionBoard('c'));
    for (let n = 0; n < EVENTS; n++) {
      const segments = Array.from({ length: 8 }, (_, k) => `s${(n + k) % 50}`);
      const entries = ['spam', 'rw', 'other'].map((actor) => ({
        item: actor === 'other' ? `i${n}` : actor,
        amount: 1,
        actor,
        segments,
      }));
      // Each actor's own item, and one the others share: the one retracted whole, the other kept.
      entries.push({ item: 'gone', amount: 1, actor: 'other', segments });
      await world.graph.ranking.incrementBatch(commands.batch({ board: 'c', entries }));
      clock.advanceMs(61_000);
    }
  }, 120_000);

  /** Commands Redis ran (INFO commandstats, every command): this connection's only, one at a time. */
  async function commandsRun(): Promise<number> {
    const info = await world.redis.client.info('commandstats');
    return [...info.matchAll(/calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  }

  /** Runs `step` until done: the commands of each step (less the INFOs' and the FCALL itself). */
  async function stepsUntilDone(step: (first: boolean) => Promise<{ done: boolean }>): Promise<number[]> {
    const perStep: number[] = [];
    for (let done = false; !done && perStep.length < MOST_STEPS;) {
      const before = await commandsRun();
      done = (await step(perStep.length === 0)).done;
      perStep.push((await commandsRun()) - before - 2);
    }
    return perStep;
  }

  async function retraction(kind: RetractionKind, target: string, id: string): Promise<number[]> {
    const board = await world.graph.cache.get('c');
    const store = world.graph.module.get(RetractionStore);
    const [most, nowMs] = [STEP_UNITS, clock.nowMs()];
    return stepsUntilDone(() =>
      store.step(kind, board, board.shards[0], {
        id,
        target,
        most,
        ledgerWindow: 1,
        blockUntilMs: 0,
        blockKey: target,
        nowMs,
      }),
    );
  }

  async function listed(item: string, segment?: string): Promise<boolean> {
    const windows = SUM.windows.map((window) => window.name);
    const tops = await Promise.all(
      windows.map((w) => world.graph.ranking.top('c', w, 0, 1000, segment ? { segment } : {})),
    );
    return tops.some((top) => top.items.some((row) => row.item === item && row.score !== 0));
  }

  it("an actor's retraction: several steps, each within COMMANDS_PER_STEP, and none of its events left", async () => {
    const perStep = await retraction('actor', 'spam', 'r-actor');
    expect(perStep.length).toBeGreaterThan(2);
    expect(perStep.length).toBeLessThan(MOST_STEPS); // finished
    expect(Math.max(...perStep)).toBeLessThanOrEqual(COMMANDS_PER_STEP);
    expect(await listed('spam')).toBe(false);
    expect(await listed('spam', 's5')).toBe(false);
    expect(await listed('i5')).toBe(true);
  }, 120_000);

  it("an item's retraction: several steps, each within COMMANDS_PER_STEP, and the item gone", async () => {
    const perStep = await retraction('item', 'gone', 'r-item');
    expect(perStep.length).toBeGreaterThan(2);
    expect(perStep.length).toBeLessThan(MOST_STEPS); // finished
    expect(Math.max(...perStep)).toBeLessThanOrEqual(COMMANDS_PER_STEP);
    expect(await listed('gone')).toBe(false);
    expect(await listed('gone', 's7')).toBe(false);
  }, 120_000);

  it("an actor's re-weighting to 0: several steps, each within COMMANDS_PER_STEP, every event counted again", async () => {
    const board = await world.graph.cache.get('c');
    const store = world.graph.module.get(ActorWeightsStore);
    const [most, nowMs] = [STEP_UNITS, clock.nowMs()];
    let events = 0;
    const perStep = await stepsUntilDone(async (fresh) => {
      const reply = await store.step(board, board.shards[0], {
        actor: 'rw',
        weight: 0,
        most,
        ledgerWindow: 1,
        fresh,
        places: 0,
        nowMs,
      });
      events = reply.events;
      return reply;
    });
    expect(perStep.length).toBeGreaterThan(2);
    expect(perStep.length).toBeLessThan(MOST_STEPS); // finished
    expect(Math.max(...perStep)).toBeLessThanOrEqual(COMMANDS_PER_STEP);
    expect(events).toBe(EVENTS);
    expect(await listed('rw')).toBe(false);
    expect(await listed('rw', 's5')).toBe(false);
  }, 120_000);
});
