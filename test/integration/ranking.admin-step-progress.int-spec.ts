import { useRankingGraph } from '../support/ranking-graph';
import { everyOptionBoard } from '../support/board-settings';
import { AppConfig } from '../../src/common/config';
import { BOARDS } from '../../harness/worst-case/boards';
import { ActorWeightsStore } from '../../src/ranking/actor-weights/actor-weights.store';
import { RetractionKind, RetractionStore } from '../../src/ranking/retraction/retraction.store';
import { adminStepUnits } from '../../src/ranking/core/write-cost';
import { WriteCommands } from '../../src/ranking/writes/write-commands';
import { FakeClock } from '../../harness/clock';
import { TOPOLOGIES } from '../../harness/redis';
import { PageAnswer } from '../../src/ranking/core/answers';

const T0 = 1_700_000_000_000;
const SUM = BOARDS['wc-sum'];
/** Events of each actor, a minute apart, each in 8 of the segments s0 … s27. */
const EVENTS = 20;
const SEGMENTS = Array.from({ length: EVENTS + 8 }, (_, k) => `s${k}`);
/** Far more steps than any target here takes (a few hundred at the least budget): past it, a step made no progress. */
const MOST_STEPS = 3000;
/**
 * Step budgets under the default's: the least WRITE_COST_PER_CALL may be set to (16 units, less than
 * looking into the board's 8 windows costs), and half the default's (144 units, where each step's looks
 * take half of it).
 */
const BUDGETS = [adminStepUnits(100), Math.floor(adminStepUnits(new AppConfig().WRITE_COST_PER_CALL) / 2)];
const CASES = TOPOLOGIES.flatMap((topology) => BUDGETS.map((units) => [topology, units] as const));

/**
 * A page without what history keeps: the board's name and previous ranks (an actor's retraction and
 * re-weighting leave kept listings as they were; an item's history is retraction-history's property).
 */
function live(page: PageAnswer): unknown {
  return { ...page, board: undefined, items: page.items.map((row) => ({ ...row, previousRank: undefined })) };
}

/**
 * Whatever step budget the service is set to, every admin step on the board of every option (8 windows,
 * 8 views, segments with snapshots, ties first, capped actors) makes progress: an actor's retraction, an
 * item's and an actor's re-weighting to 0 each finish, and the board then answers, in every window and
 * view of the board and of each segment, what a twin answers that never had the retracted events and
 * had the re-weighted actor's at weight 0 from the first.
 */
describe.each(CASES)('admin steps always progress (%s, %i units a step)', (topology, units) => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  const world = useRankingGraph(topology, clock, { WRITE_COST_PER_CALL: '1000000' });

  beforeAll(async () => {
    for (const name of ['c', 'twin']) await world.graph.ranking.putBoard(everyOptionBoard(name));
    // The twin's events of `rw` count at weight 0 as they come: what a re-weighting to 0 makes of them
    // (set up at a default step's budget: only the board's own targets run at `units`).
    expect(await reweight('twin', adminStepUnits(new AppConfig().WRITE_COST_PER_CALL))).toBeLessThan(MOST_STEPS);
    for (let n = 0; n < EVENTS; n++) {
      const segments = Array.from({ length: 8 }, (_, k) => SEGMENTS[n + k]);
      const entries = ['spam', 'rw', 'other'].map((actor) => ({
        item: actor === 'other' ? `i${n}` : actor,
        amount: 1 + (n % 3),
        actor,
        segments,
      }));
      entries.push({ item: 'gone', amount: 2, actor: 'other', segments });
      await world.graph.ranking.incrementBatch(commands.batch({ board: 'c', entries }));
      // The twin never had the events retracted.
      const kept = entries.filter((e) => e.actor !== 'spam' && e.item !== 'gone');
      await world.graph.ranking.incrementBatch(commands.batch({ board: 'twin', entries: kept }));
      clock.advanceMs(61_000);
    }
  }, 120_000);

  /** Runs `step` until done: how many steps it took (MOST_STEPS when it never finished). */
  async function steps(step: (first: boolean) => Promise<{ done: boolean }>): Promise<number> {
    let count = 0;
    for (let done = false; !done && count < MOST_STEPS; count++) done = (await step(count === 0)).done;
    return count;
  }

  async function retraction(kind: RetractionKind, target: string, id: string): Promise<number> {
    const board = await world.graph.cache.get('c');
    const store = world.graph.module.get(RetractionStore);
    const nowMs = clock.nowMs();
    const step = { id, target, most: units, ledgerWindow: 1, blockUntilMs: 0, blockKey: target, nowMs };
    return steps(() => store.step(kind, board, board.shards[0], step));
  }

  it("an actor's retraction finishes", async () => {
    expect(await retraction('actor', 'spam', 'r-actor')).toBeLessThan(MOST_STEPS);
  }, 120_000);

  it("an item's retraction finishes", async () => {
    expect(await retraction('item', 'gone', 'r-item')).toBeLessThan(MOST_STEPS);
  }, 120_000);

  /** Re-weights `rw` to 0 on `name` until done, `most` units a step: how many steps it took. */
  async function reweight(name: string, most: number): Promise<number> {
    const board = await world.graph.cache.get(name);
    const store = world.graph.module.get(ActorWeightsStore);
    const nowMs = clock.nowMs();
    return steps((fresh) =>
      store.step(board, board.shards[0], {
        actor: 'rw',
        weight: 0,
        most,
        ledgerWindow: 1,
        fresh,
        places: 0,
        nowMs,
      }),
    );
  }

  it("an actor's re-weighting to 0 finishes", async () => {
    expect(await reweight('c', units)).toBeLessThan(MOST_STEPS);
  }, 120_000);

  it('every window and view of the board and of each segment answers what the twin does', async () => {
    const reads = [...SUM.windows.map((w) => w.name), ...SUM.views.map((v) => v.name)];
    let rows = 0;
    for (const segment of [undefined, ...SEGMENTS])
      for (const read of reads) {
        const options = segment ? { segment } : {};
        const [board, twin] = await Promise.all(
          ['c', 'twin'].map((name) => world.graph.ranking.top(name, read, 0, 1000, options)),
        );
        rows += twin.items.length;
        expect(JSON.stringify([segment, read, live(board)])).toEqual(JSON.stringify([segment, read, live(twin)]));
      }
    expect(rows).toBeGreaterThan(1000); // not vacuous
  }, 120_000);
});
