import fc from 'fast-check';
import { FakeClock } from '../../harness/clock';
import { SHARD_CELLS } from '../../harness/redis';
import { ModerationService } from '../../src/ranking/moderation/moderation.service';
import { BestAggregate, BestModel } from '../support/best-model';
import { GroupModel, GroupRow } from '../support/group-model';
import { expectAroundAndLookup } from '../support/ranking-reads';
import { useRankingGraph } from '../support/ranking-graph';
import { joinStep } from '../support/group-steps';

/**
 * Group boards over member boards of the options group boards once refused (issue #48): `order: asc`
 * (a group sums its lowest members, the lowest sum first), `ties: first` (the groups rank by shared
 * ties) and moderation (a hidden member, or on a review board one not allowed, counts for no group,
 * and counts again once allowed), against a brute force, on one Redis and a Cluster, 1 and 3 shards.
 */
const WINDOWS = [{ name: 'w', periodSec: 60, intervalSec: 20 }];
const ITEMS = ['a', 'b', 'c', 'd', 'é', 'a b/c'];
const GROUPS = ['red', 'blue', 'g/é'];

type State = 'hidden' | 'allowed' | null;
type Step =
  | { kind: 'score'; item: string; score: number }
  | { kind: 'join'; item: string; group: string | null }
  | { kind: 'moderate'; item: string; state: State }
  | { kind: 'advance'; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('score' as const),
      item: fc.constantFrom(...ITEMS),
      score: fc.integer({ min: -4, max: 6 }),
    }),
  },
  {
    weight: 3,
    arbitrary: joinStep(ITEMS, GROUPS),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('moderate' as const),
      item: fc.constantFrom(...ITEMS),
      state: fc.constantFrom<State>('hidden', 'allowed', null),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 45_000 }) }),
  },
);

/** A member board as the run declares it. */
interface Member {
  aggregate: BestAggregate;
  order?: 'asc';
  ties?: 'first';
  review?: true;
}

const MEMBERS: Member[] = [
  { aggregate: 'min', order: 'asc' },
  { aggregate: 'last', order: 'asc', review: true },
  { aggregate: 'max', ties: 'first' },
  { aggregate: 'last', ties: 'first', review: true },
  { aggregate: 'max' },
];

const rule = fc.record({ top: fc.integer({ min: 1, max: 3 }), decay: fc.constantFrom(1, 0.5) });

/** Always among the runs: four members of one group, two hidden, one allowed again (top 2 of an asc board). */
const HIDE_AND_ALLOW: [number, Member, { top: number; decay: number }, Step[]] = [
  1_600_000_000_000,
  MEMBERS[0],
  { top: 2, decay: 0.5 },
  [
    ...['a', 'b', 'c', 'd'].map((item): Step => ({ kind: 'join', item, group: 'red' })),
    ...['a', 'b', 'c', 'd'].map((item, i): Step => ({ kind: 'score', item, score: i - 1 })),
    { kind: 'join', item: 'é', group: 'blue' },
    { kind: 'score', item: 'é', score: 2 },
    { kind: 'moderate', item: 'a', state: 'hidden' },
    { kind: 'moderate', item: 'b', state: 'hidden' },
    { kind: 'moderate', item: 'a', state: null },
  ],
];

/** Always among the runs: a review board of strict ties, its members counted once allowed, and no longer once hidden. */
const REVIEWED: [number, Member, { top: number; decay: number }, Step[]] = [
  1_600_000_000_000,
  MEMBERS[3],
  { top: 3, decay: 1 },
  [
    ...ITEMS.map((item, i): Step => ({ kind: 'join', item, group: GROUPS[i % GROUPS.length] })),
    ...ITEMS.map((item): Step => ({ kind: 'score', item, score: 2 })),
    ...ITEMS.map((item): Step => ({ kind: 'moderate', item, state: 'allowed' })),
    { kind: 'moderate', item: 'b', state: 'hidden' },
    { kind: 'moderate', item: 'c', state: null },
    { kind: 'advance', ms: 70_000 },
    { kind: 'score', item: 'a', score: 5 },
  ],
];

const CASES = SHARD_CELLS;

describe.each(CASES)(
  'group boards over asc, ties-first and moderated member boards (property, %s, %i shards)',
  (topology, shards) => {
    const clock = new FakeClock(0);
    const world = useRankingGraph(topology, clock, {});
    let board = 0;
    let listedRows = 0;

    it('every read of the group board is exact after scores, joins, hides, allows and expiry', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
          fc.constantFrom(...MEMBERS),
          rule,
          fc.array(step, { minLength: 10, maxLength: 30 }),
          async (startMs, shape, { top, decay }, steps) => {
            const member = `m${board}`;
            const group = `g${board++}`;
            clock.setMs(startMs);
            const { review, ...options } = shape;
            const windows = WINDOWS.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec }));
            await world.graph.ranking.putBoard({
              name: member,
              windows,
              shards,
              ...options,
              ...(review && { moderation: { review } }),
            });
            await world.graph.ranking.putBoard({ name: group, groupOf: { board: member, window: 'w', top, decay } });
            const run = {
              member,
              group,
              shape,
              scores: new BestModel(WINDOWS, shape.aggregate),
              groups: new GroupModel(top, decay),
              states: new Map<string, State>(),
            };
            for (const s of steps) {
              await apply(run, s);
              await compare(run);
            }
            await world.graph.ranking.deleteBoard(group);
            await world.graph.ranking.deleteBoard(member);
          },
        ),
        { numRuns: 15, examples: [HIDE_AND_ALLOW, REVIEWED] },
      );
      expect(listedRows).toBeGreaterThan(30); // not vacuous
    });

    it('refuses a member board with a tiebreak or metrics (400 GROUP_MEMBER_UNSUPPORTED), and a group board of its own order or ties', async () => {
      const windows = [{ name: 'w', period: 60, interval: 20 }];
      const unsupported = { code: 'GROUP_MEMBER_UNSUPPORTED' };
      await world.graph.ranking.putBoard({ name: 'tb', windows, shards, aggregate: 'max', tiebreak: { order: 'asc' } });
      await world.graph.ranking.putBoard({ name: 'mt', windows, shards, metrics: ['up', 'down'] });
      for (const member of ['tb', 'mt']) {
        await world.graph.ranking.putBoard({
          name: `g${member}`,
          groupOf: { board: member, window: 'w', top: 2, decay: 1 },
        });
        await expect(
          world.graph.groupBoards.setMember({ name: `g${member}`, group: 'red', item: 'a' }),
        ).rejects.toMatchObject(unsupported);
        await expect(world.graph.ranking.top(`g${member}`, undefined, 0, 10)).rejects.toMatchObject(unsupported);
      }
      const own = { name: 'gown', groupOf: { board: 'tb', window: 'w', top: 2, decay: 1 } };
      const refused = { code: 'INVALID_INPUT', message: expect.stringContaining("in its member board's order") };
      await expect(world.graph.ranking.putBoard({ ...own, ties: 'first' })).rejects.toMatchObject(refused);
      await expect(world.graph.ranking.putBoard({ ...own, aggregate: 'max', order: 'asc' })).rejects.toMatchObject(
        refused,
      );
    });

    interface Run {
      member: string;
      group: string;
      shape: Member;
      scores: BestModel;
      groups: GroupModel;
      states: Map<string, State>;
    }

    async function apply(run: Run, s: Step): Promise<void> {
      const nowMs = clock.nowMs();
      if (s.kind === 'advance') return clock.advanceMs(s.ms);
      if (s.kind === 'score') {
        run.scores.record(nowMs, nowMs, s.item, s.score);
        await world.graph.ranking.score(run.member, s.item, s.score);
        return;
      }
      if (s.kind === 'moderate') {
        run.states.set(s.item, s.state);
        await world.graph.module.get(ModerationService).setState({ name: run.member, item: s.item, state: s.state });
        return;
      }
      run.groups.join(s.item, s.group);
      await world.graph.groupBoards.setMember({ name: run.group, group: s.group, item: s.item });
    }

    /** The group board's listing by the model: the member window's listed items (moderation's left out), grouped. */
    function expectedOf(run: Run): GroupRow[] {
      const shown = (item: string) =>
        run.shape.review ? run.states.get(item) === 'allowed' : run.states.get(item) !== 'hidden';
      const members = [...run.scores.values('w', clock.nowMs())].filter(([item]) => shown(item));
      return run.groups.listing(
        members.map(([item, score]) => ({ item, score })),
        run.shape.order === 'asc',
      );
    }

    async function compare(run: Run): Promise<void> {
      const expected = expectedOf(run);
      const name = run.group;
      listedRows += expected.length;
      const top = await world.graph.ranking.top(name, undefined, 0, 20);
      expect(top.items.map(({ rank, item, score }) => ({ rank, item, score }))).toEqual(expected);
      // The percentile of competition ranks: the share of the other groups not ranked ahead.
      const percentile = (rank: number) =>
        expected.length <= 1 ? 100 : Math.round(((expected.length - rank) / (expected.length - 1)) * 10000) / 100;
      for (const id of [...GROUPS, 'none']) {
        const read = await world.graph.ranking.item(name, undefined, id);
        const row = expected.find((r) => r.item === id);
        expect({ id, rank: read.rank, score: read.score, percentile: read.percentile }).toEqual({
          id,
          rank: row?.rank ?? null,
          score: row?.score ?? 0,
          percentile: row ? percentile(row.rank) : null,
        });
      }
      await expectAroundAndLookup(world.graph, { name, window: 'w', ids: [...GROUPS, 'none'] }, expected);
      // A record tied with a listed group's score: 1 + the groups ranked strictly ahead of it.
      const probe = expected[Math.floor(expected.length / 2)]?.score ?? 1;
      const sign = run.shape.order === 'asc' ? -1 : 1;
      const answer = await world.graph.standing.rank({ name, score: probe });
      expect({ probe, rank: answer.rank }).toEqual({
        probe,
        rank: 1 + expected.filter((row) => sign * (row.score - probe) > 0).length,
      });
    }
  },
);
