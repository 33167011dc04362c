import { useRankingGraph } from '../support/ranking-graph';
import { seedEveryOptionBoard } from '../support/board-settings';
import { AppConfig } from '../../src/common/config';
import { ActorWeightsStore } from '../../src/ranking/actor-weights/actor-weights.store';
import { RetractionStore } from '../../src/ranking/retraction/retraction.store';
import { adminStepUnits } from '../../src/ranking/core/write-cost';
import { WriteCommands } from '../../src/ranking/writes/write-commands';
import { FakeClock } from '../../harness/clock';

const T0 = 1_700_000_000_000;
/** Items of each board: a listing past READ_APART_ROWS (100) and a decay view past a step's rebase share. */
const ITEMS = 300;
const ACTORS = 30;
const SEGMENTS = 10;
const IDLE_MS = 14 * 86_400_000;
const STEP_UNITS = adminStepUnits(new AppConfig().WRITE_COST_PER_CALL);
/** actor_lib's STEP.REBASED: the decay members a step's call may move are a share of its units. */
const REBASED_UNITS = 8;
/** What a call that only crosses boundaries runs: the config, the marks, the snapshot stored, the record. */
const CROSSING_CALL_COMMANDS = 40;
const MOST_STEPS = 2000;
/** id, time, µs, arguments, client address. */
type SlowlogEntry = [number, number, number, string[], string];

/**
 * The first admin step after an idle board (issue #45): on the board of every option (8 windows, 8 views,
 * segments, ties first, capped actors) left two weeks, a retraction's or a re-weighting's first step met
 * every window's expiry, a snapshot of 300 rows to store at the 10 000-minute window's boundary and the
 * decay views' rebase, all in one call beside its own units (49 M Redis instructions, 8 ms at the
 * harness's `ci` size). The snapshot is stored by a call of its own that does nothing else, and no call
 * of a step moves more decay members than its share of the step's units; the step still finishes.
 */
describe('the first admin step after an idle board of every option (single)', () => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  const world = useRankingGraph('single', clock, { WRITE_COST_PER_CALL: '1000000' });

  beforeAll(async () => {
    for (const board of ['weight', 'actor'])
      await seedEveryOptionBoard(world.graph, commands, board, { items: ITEMS, actors: ACTORS, segments: SEGMENTS });
    // A boundary crossed: the 10 000-minute window's mark is set, so the next one stores its listing.
    clock.advanceMs(60_000);
    for (const board of ['weight', 'actor'])
      await world.graph.ranking.incrementBatch(
        commands.batch({ board, entries: [{ item: 'i0', amount: 1, actor: 'a0' }] }),
      );
    clock.advanceMs(IDLE_MS);
    await world.redis.client.config('SET', 'slowlog-log-slower-than', '0');
    await world.redis.client.config('SET', 'slowlog-max-len', '100000');
  }, 120_000);

  /** Each FCALL since the last reading: the commands its script ran, oldest call first. */
  async function calls(): Promise<string[][][]> {
    const entries = (await world.redis.client.slowlog('GET', 100_000)) as SlowlogEntry[];
    await world.redis.client.slowlog('RESET');
    const found: string[][][] = [];
    let inCall: string[][] = [];
    for (const [, , , args, client] of entries.reverse()) {
      if (client === '?:0') inCall.push(args);
      else if (/^fcall/i.test(String(args[0]))) {
        found.push(inCall);
        inCall = [];
      } else inCall = [];
    }
    return found;
  }

  /** The decay view's members moved to the new landmark so far (its `next` zset). */
  async function rebased(board: string): Promise<number> {
    const [, keys] = await world.redis.client.scan('0', 'MATCH', `*{tb:board:${board}}:fading:next`, 'COUNT', 100_000);
    return keys.length === 0 ? 0 : world.redis.client.zcard(keys[0]);
  }

  /** Steps to the end: the first step's calls, and the most decay members one step moved. */
  async function firstStepThenAll(board: string, step: (first: boolean) => Promise<{ done: boolean }>) {
    await world.redis.client.slowlog('RESET');
    let done = (await step(true)).done;
    const first = await calls();
    let mostRebased = await rebased(board);
    let steps = 1;
    for (; !done && steps < MOST_STEPS; steps++) {
      const before = await rebased(board);
      done = (await step(false)).done;
      mostRebased = Math.max(mostRebased, (await rebased(board)) - before);
    }
    return { first, mostRebased, steps };
  }

  function expectCrossingApart(first: string[][][]): void {
    const storing = first.findIndex((call) => call.some((args) => /^set$/i.test(args[0]) && /:m:snap:/.test(args[1])));
    expect(storing).toBeGreaterThanOrEqual(0);
    // The call storing the listing of 300 rows does nothing else; the step's work is the next call's.
    expect(first[storing].length).toBeLessThanOrEqual(CROSSING_CALL_COMMANDS);
    expect(first.length).toBe(storing + 2);
  }

  it("a re-weighting's first step stores the snapshot apart, and no step rebases past its share", async () => {
    const board = await world.graph.cache.get('weight');
    const store = world.graph.module.get(ActorWeightsStore);
    const nowMs = clock.nowMs();
    const step = { actor: 'a1', weight: 100, most: STEP_UNITS, ledgerWindow: 2, places: 0, nowMs };
    const { first, mostRebased, steps } = await firstStepThenAll('weight', (fresh) =>
      store.step(board, board.shards[0], { ...step, fresh }),
    );
    expectCrossingApart(first);
    expect(mostRebased).toBeLessThanOrEqual(Math.floor(STEP_UNITS / REBASED_UNITS));
    expect(steps).toBeLessThan(MOST_STEPS); // finished
  }, 120_000);

  it("an actor's retraction's first step stores the snapshot apart, and no step rebases past its share", async () => {
    const board = await world.graph.cache.get('actor');
    const store = world.graph.module.get(RetractionStore);
    const nowMs = clock.nowMs();
    const step = {
      id: 'r-a1',
      target: 'a1',
      most: STEP_UNITS,
      ledgerWindow: 2,
      blockUntilMs: 0,
      blockKey: 'a1',
      nowMs,
    };
    const { first, mostRebased, steps } = await firstStepThenAll('actor', () =>
      store.step('actor', board, board.shards[0], step),
    );
    expectCrossingApart(first);
    expect(mostRebased).toBeLessThanOrEqual(Math.floor(STEP_UNITS / REBASED_UNITS));
    expect(steps).toBeLessThan(MOST_STEPS); // finished
    const top = await world.graph.ranking.top('actor', 'd', 0, 1000);
    expect(top.items.filter((row) => row.item === 'i1' && row.score !== 0)).toEqual([]);
  }, 120_000);
});
