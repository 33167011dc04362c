import { useRankingGraph } from '../../support/ranking-graph';
import { everyOptionBoard } from '../../support/board-settings';
import { BOARDS } from '../../../harness/worst-case/boards';
import { ALIAS_STEP_UNITS } from '../../../src/ranking/aliases/aliases.service';
import { AliasesStore } from '../../../src/ranking/aliases/aliases.store';
import { ALIASES_PER_BOARD } from '../../../src/ranking/core/ranking.limits';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { FakeClock } from '../../../harness/clock';
import { TOPOLOGIES } from '../../../harness/redis';
import { PageAnswer } from '../../../src/ranking/core/answers';

const T0 = 1_700_000_000_000;
const SUM = BOARDS['wc-sum'];
/** Events of each actor, a minute apart, each in 8 of the segments s0 … s27. */
const EVENTS = 20;
const SEGMENTS = Array.from({ length: EVENTS + 8 }, (_, k) => `s${k}`);
/** Far more steps than a merge here takes: past it, a step made no progress. */
const MOST_STEPS = 3000;
const SHARDS = 3;

/**
 * A page without the board's name, previous ranks and a rising view's phase start (a merge leaves
 * kept listings and the canonical item's phase as its own events made them), its scores to
 * 12 digits: a decaying window's sum of the moved amounts is added in another order.
 */
function live(page: PageAnswer): unknown {
  const items = page.items.map((row) => ({
    ...row,
    score: Number(row.score.toPrecision(12)),
    previousRank: undefined,
    since: undefined,
  }));
  return { ...page, board: undefined, items };
}

/**
 * An alias merge's steps run the least units the service gives one (ALIAS_STEP_UNITS / 2, a take that
 * gives its own chunk) and ALIAS_STEP_UNITS (a take given on another shard) on the board of every option
 * (8 windows, 8 views, segments with snapshots, ties first, capped actors): each merge finishes, and the
 * board then answers, in every window and view of the board and of each segment, what a twin answers
 * that had the canonical item named in the aliases' events from the first.
 */
describe.each(TOPOLOGIES)('alias merge steps always progress (%s)', (topology) => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  const world = useRankingGraph(topology, clock, { WRITE_COST_PER_CALL: '1000000' });
  /** Aliases of `canon`: one on its shard, one on another. */
  let aliases: { here: string; away: string };

  beforeAll(async () => {
    for (const name of ['c', 'twin']) await world.graph.ranking.putBoard({ ...everyOptionBoard(name), shards: SHARDS });
    const board = await world.graph.cache.get('c');
    const names = Array.from({ length: 50 }, (_, k) => `alias-${k}`);
    const same = (id: string) => board.shardOf(id) === board.shardOf('canon');
    aliases = { here: names.find(same)!, away: names.find((id) => !same(id))! };
    for (let n = 0; n < EVENTS; n++) {
      const segments = Array.from({ length: 8 }, (_, k) => SEGMENTS[n + k]);
      // Each actor names one id, as a cap counts per actor and item.
      const named = { a: 'canon', b: aliases.here, c: aliases.away, d: `i${n}` };
      const entries = Object.entries(named).map(([actor, item]) => ({ item, amount: 1 + (n % 3), actor, segments }));
      await world.graph.ranking.incrementBatch(commands.batch({ board: 'c', entries }));
      const canonical = entries.map((e) => (e.item.startsWith('alias-') ? { ...e, item: 'canon' } : e));
      await world.graph.ranking.incrementBatch(commands.batch({ board: 'twin', entries: canonical }));
      clock.advanceMs(61_000);
    }
  }, 120_000);

  /**
   * Merges `alias` into `canon` on board c as AliasesService does (a take, then its give on the
   * canonical item's shard until given), `most` units a take: how many takes it took (MOST_STEPS: never done).
   */
  async function merge(alias: string, most: number): Promise<number> {
    const board = await world.graph.cache.get('c');
    const store = world.graph.module.get(AliasesStore);
    const put = await store.put(board, {
      alias,
      item: 'canon',
      run: `run-${alias}`,
      most: ALIASES_PER_BOARD,
      nowMs: clock.nowMs(),
    });
    const here = board.shardOf(alias) === board.shardOf('canon');
    const step = {
      alias,
      item: 'canon',
      run: put.run,
      most,
      fresh: true,
      here,
      seq: 0,
      chunk: '',
      nowMs: clock.nowMs(),
    };
    let acked = 0;
    for (let count = 0; count < MOST_STEPS; count++) {
      const taken = await store.step(board, { ...step, mode: 'take', acked });
      if (taken.done) return count;
      if (taken.seq === 0 || here) {
        acked = Math.max(acked, taken.seq);
        continue;
      }
      const give = { ...step, mode: 'give' as const, acked, seq: taken.seq, chunk: taken.chunk };
      for (let gives = 0; (await store.step(board, give)).seq === 0; gives++) expect(gives).toBeLessThan(MOST_STEPS);
      acked = taken.seq;
    }
    return MOST_STEPS;
  }

  it("a merge on the canonical item's shard finishes at the least units a take is given", async () => {
    expect(await merge(aliases.here, ALIAS_STEP_UNITS / 2)).toBeLessThan(MOST_STEPS);
  }, 120_000);

  it('a merge from another shard finishes at the units a take is given', async () => {
    expect(await merge(aliases.away, ALIAS_STEP_UNITS)).toBeLessThan(MOST_STEPS);
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
