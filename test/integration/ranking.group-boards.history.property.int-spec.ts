import fc from 'fast-check';
import { FakeClock } from '../../harness/clock';
import { SHARD_CELLS } from '../../harness/redis';
import { GroupModel } from '../support/group-model';
import { GroupHistoryModel } from '../support/group-history-model';
import { RankingModel } from '../support/ranking-model';
import { incrementStep, joinStep, retractStep } from '../support/group-steps';
import { useRankingGraph } from '../support/ranking-graph';
import { GroupBoardsStore } from '../../src/ranking/group-boards/group-boards.store';
import type { HistoryStoreCall, PartsCall } from '../../src/ranking/group-boards/group-boards.functions';
import { RANKING } from '../../src/ranking/ranking.functions';
import { RedisFunctions } from '../../src/redis/redis-functions';

const DAY_SEC = 86_400;
const SNAPSHOTS = { keep: 4, top: 2 };
const ARCHIVE = { keep: 2, top: 2 };
/** A rolling member window keeping snapshots and a calendar one keeping archives: a group board ranks each. */
const WINDOWS = [
  { name: 'w', periodSec: 60, intervalSec: 20, snapshots: SNAPSHOTS },
  { name: 'day', periodSec: DAY_SEC, intervalSec: DAY_SEC, calendar: true },
];
const HISTORY_WINDOWS = [
  { name: 'w', intervalSec: 20, kept: SNAPSHOTS },
  { name: 'day', intervalSec: DAY_SEC, calendar: true as const, kept: ARCHIVE },
];
const ITEMS = ['a', 'b', 'c', 'd', 'é'];
/** The group boards' rule: a group of 4 members counts 3, so a retraction leaves weights to shift and a member out. */
const RULE = { top: 3, decay: 0.5 };
const GROUPS = ['red', 'blue', 'g/é'];
/**
 * Member rows a call of the sharded history merge reads or stores here (the service's is
 * GROUP_HISTORY_PAGE_ROWS, far past these runs' members): a shard's part of two groups, and a record of
 * two listed groups, span pages.
 */
const PAGE_ROWS = 2;

type Step =
  | { kind: 'increment'; item: string; amount: number }
  | { kind: 'join'; item: string; group: string | null; alone?: true }
  | { kind: 'advance'; ms: number }
  | { kind: 'retract'; item: string }
  | { kind: 'check' };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: incrementStep(ITEMS),
  },
  {
    weight: 3,
    arbitrary: joinStep(ITEMS, GROUPS),
  },
  // A membership change alone: only its item's shard runs a call in that slot (the others quiet).
  {
    weight: 2,
    arbitrary: joinStep(ITEMS, GROUPS).map((join) => ({ ...join, alone: true as const })),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 45_000 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 30 * 3600_000 }) }),
  },
  { weight: 1, arbitrary: retractStep(ITEMS) },
  // Reads settle the groups: writes between two of them leave groups dirty at the boundaries they cross.
  { weight: 3, arbitrary: fc.constant({ kind: 'check' as const }) },
);

/** Each run starts with every item in a group (random runs then reach scoring groups at their boundaries). */
const JOINED: Step[] = ITEMS.map((item, i) => ({ kind: 'join', item, group: GROUPS[i % GROUPS.length] }));

/**
 * Always among the runs: groups score, a boundary of each window passes, a write crosses the next with
 * its groups dirty (no read settled them), a member leaves, a day ends and an item counted in kept
 * listings is retracted.
 */
const EVERYTHING: [number, Step[]] = [
  1_600_000_000_000,
  [
    ...ITEMS.map((item, i): Step => ({ kind: 'increment', item, amount: i + 1 })),
    { kind: 'advance', ms: 25_000 },
    { kind: 'join', item: 'd', group: 'red' },
    { kind: 'check' },
    { kind: 'increment', item: 'b', amount: 4 },
    { kind: 'advance', ms: 20_000 },
    { kind: 'join', item: 'a', group: null },
    { kind: 'check' },
    { kind: 'increment', item: 'é', amount: 2 },
    { kind: 'advance', ms: DAY_SEC * 1000 },
    { kind: 'increment', item: 'c', amount: 9 },
    { kind: 'check' },
    { kind: 'retract', item: 'b' },
    { kind: 'check' },
    { kind: 'advance', ms: DAY_SEC * 1000 },
  ],
];

/**
 * A membership change crosses the member window's boundary after its slots left the window: the next
 * boundary's listing counts none of them.
 */
const EXPIRED_BEFORE_JOIN: [number, Step[]] = [
  1_600_000_000_000,
  [
    { kind: 'increment', item: 'a', amount: 1 },
    { kind: 'advance', ms: 60_000 },
    { kind: 'join', item: 'a', group: 'red' },
    { kind: 'advance', ms: 20_000 },
    { kind: 'increment', item: 'a', amount: 1 },
  ],
];

/**
 * Retractions of counted members of a group of four (three counted): the members after the retracted
 * one move up a weight, the fourth does not move in; in a snapshot and in the day's archive.
 */
const RETRACT_COUNTED: [number, Step[]] = [
  1_600_000_000_000,
  [
    { kind: 'join', item: 'b', group: 'red' },
    { kind: 'join', item: 'é', group: 'red' },
    ...['a', 'b', 'd', 'é', 'c'].map((item, i): Step => ({ kind: 'increment', item, amount: 5 - i })),
    { kind: 'advance', ms: 25_000 },
    { kind: 'check' },
    { kind: 'retract', item: 'b' },
    { kind: 'check' },
    { kind: 'advance', ms: DAY_SEC * 1000 },
    { kind: 'increment', item: 'c', amount: 1 },
    { kind: 'retract', item: 'a' },
    { kind: 'check' },
  ],
];

/**
 * Membership changes alone, each in a slot where only its item's shard runs a call: the boundaries
 * ending those slots keep listings all the same, the quiet shards' members as they stood then (the
 * last one after the first slot's scores left the window).
 */
const QUIET_SHARDS: [number, Step[]] = [
  1_600_000_000_000,
  [
    ...ITEMS.map((item, i): Step => ({ kind: 'increment', item, amount: i + 1 })),
    { kind: 'check' },
    { kind: 'advance', ms: 20_000 },
    { kind: 'increment', item: 'c', amount: 2 },
    { kind: 'advance', ms: 20_000 },
    { kind: 'join', item: 'a', group: 'red', alone: true },
    { kind: 'advance', ms: 20_000 },
    { kind: 'join', item: 'b', group: 'blue', alone: true },
    { kind: 'advance', ms: 40_000 },
    { kind: 'check' },
  ],
];

/**
 * Member boards of one shard (each crossing keeps the listing) and of three (each shard's crossing
 * records its part, the group board's next read merges them: group_parts_lib).
 */
const CASES = SHARD_CELLS;

describe.each(CASES)(
  'group boards keep history and archives against a brute-force model (property, %s, %i shards)',
  (topology, shards) => {
    const clock = new FakeClock(0);
    const world = useRankingGraph(topology, clock, {});
    const setup = {
      get ranking() {
        return world.graph.ranking;
      },
      get groupBoards() {
        return world.graph.groupBoards;
      },
    };
    let board = 0;
    const compared = { snapshots: 0, archives: 0 };
    /** Kept listings counting an item when it was retracted (compared at the next check). */
    const retracted = { listings: 0 };
    /** The merge's calls past a first page: of a shard's part read, of a record stored. */
    const later = { parts: 0, records: 0 };
    beforeAll(() => {
      world.graph.module.get(GroupBoardsStore).historyPageRows = PAGE_ROWS;
      const functions = world.graph.module.get(RedisFunctions);
      const call = functions.call.bind(functions);
      jest.spyOn(functions, 'call').mockImplementation((fn, input) => {
        if (fn === RANKING.functions.groupHistoryParts && ((input as PartsCall).page?.after ?? 0) > 0) later.parts++;
        if (fn === RANKING.functions.groupHistoryStore && !(input as HistoryStoreCall).first) later.records++;
        return call(fn, input);
      });
    });

    it("a group board's snapshots, item histories and archives are its groups' listings at each boundary", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
          fc.array(step, { minLength: 1, maxLength: 30 }),
          async (startMs, steps) => {
            const member = `hm${board}`;
            const groupBoards = WINDOWS.map((w) => ({ name: `hg${board}${w.name}`, window: w }));
            board++;
            clock.setMs(startMs);
            const windows = [
              { name: 'w', period: 60, interval: 20, snapshots: SNAPSHOTS },
              { name: 'day', calendar: 'day' as const, archive: ARCHIVE },
            ];
            await setup.ranking.putBoard({ name: member, windows, shards });
            for (const g of groupBoards)
              await setup.ranking.putBoard({
                name: g.name,
                groupOf: { board: member, window: g.window.name, ...RULE },
              });
            const members = new RankingModel(WINDOWS);
            const groups = new GroupModel(RULE.top, RULE.decay);
            const histories = HISTORY_WINDOWS.map((w) => new GroupHistoryModel(w, shards, members, groups));
            for (const s of [...JOINED, ...steps]) {
              await apply(member, groupBoards, { members, groups, histories }, s);
              if (s.kind === 'check') await compare(groupBoards, histories);
            }
            histories.forEach((h) => h.read(clock.nowMs()));
            await compare(groupBoards, histories);
            for (const g of groupBoards) await setup.ranking.deleteBoard(g.name);
            await setup.ranking.deleteBoard(member);
          },
        ),
        { numRuns: 30, examples: [EVERYTHING, EXPIRED_BEFORE_JOIN, RETRACT_COUNTED, QUIET_SHARDS] },
      );
      // Not vacuous: kept listings with rows were compared, of both kinds.
      expect(compared.snapshots).toBeGreaterThan(5);
      expect(compared.archives).toBeGreaterThan(2);
      expect(retracted.listings).toBeGreaterThan(2);
      // Merged listings read parts and stored records past their first page.
      const paged = { parts: later.parts > 0, records: later.records > 0 };
      expect(paged).toEqual({ parts: shards > 1, records: shards > 1 });
    });

    /**
     * Runs a step and the model's part of it. Every call but an advance runs at the clock's time and
     * crosses, before it applies, the member window on the shards it calls; a write may read every
     * shard's previous listing too, so each write, membership change and retraction follows a read of
     * the member board's windows: every shard crossed (nothing merged: a read of a group board merges),
     * but a membership change `alone` (its item's shard crosses, the others stay quiet through the slot).
     * A retraction then finds the parts not merged yet holding its item where they did.
     */
    async function apply(
      member: string,
      groupBoards: Array<{ name: string }>,
      model: { members: RankingModel; groups: GroupModel; histories: GroupHistoryModel[] },
      s: Step,
    ): Promise<void> {
      const nowMs = clock.nowMs();
      if (s.kind === 'check') return model.histories.forEach((h) => h.read(nowMs));
      if (s.kind === 'advance') return clock.advanceMs(s.ms);
      if (s.kind === 'join' && s.alone) {
        model.histories.forEach((h) => h.cross(nowMs, h.shardOf(s.item)));
      } else {
        for (const window of ['w', 'day']) await setup.ranking.top(member, window, 0, 1);
        model.histories.forEach((h) => h.cross(nowMs));
      }
      if (s.kind === 'retract') {
        model.members.retract(s.item);
        for (const h of model.histories) retracted.listings += h.retract(s.item);
        const started = (await world.graph.retractions.start(member, { kind: 'item', id: s.item })).body;
        await world.graph.retractions.settled(member, started.id);
        return;
      }
      if (s.kind === 'increment') {
        model.members.increment(nowMs, s.item, s.amount);
        model.histories.forEach((h) => h.wrote(nowMs, s.item));
        await setup.ranking.increment(member, s.item, s.amount);
        return;
      }
      model.groups.join(s.item, s.group);
      model.histories.forEach((h) => h.joined(nowMs, s.item));
      for (const g of groupBoards) await setup.groupBoards.setMember({ name: g.name, group: s.group, item: s.item });
    }

    async function compare(groupBoards: Array<{ name: string }>, histories: GroupHistoryModel[]): Promise<void> {
      await compareSnapshots(groupBoards[0].name, histories[0]);
      await compareArchives(groupBoards[1].name, histories[1]);
    }

    /** The latest snapshot, each group's history through every readable one, and previousRank of the top rows. */
    async function compareSnapshots(name: string, history: GroupHistoryModel): Promise<void> {
      const readable = history.readable(clock.nowMs());
      const latest = readable[readable.length - 1];
      if (latest === undefined) {
        await expect(setup.ranking.history(name, undefined, undefined)).rejects.toThrow(/snapshot/);
      } else {
        const answer = await setup.ranking.history(name, undefined, undefined);
        expect({ at: answer.at, rows: answer.items.map(({ rank, item, score }) => ({ rank, item, score })) }).toEqual({
          at: latest.at,
          rows: latest.rows,
        });
        compared.snapshots += latest.rows.length;
      }
      for (const group of [...GROUPS, 'none']) {
        const answer = await setup.ranking.itemHistory(name, undefined, group, undefined, undefined);
        const points = readable.map(({ at, rows }) => {
          const row = rows.find((r) => r.item === group);
          return { at, rank: row?.rank ?? null, score: row?.score ?? null };
        });
        expect({ group, points: answer.points }).toEqual({ group, points });
        compared.snapshots += points.filter((point) => point.rank !== null).length;
      }
      const previous = new Map((history.kept[history.kept.length - 1]?.rows ?? []).map((r) => [r.item, r.rank]));
      const top = await setup.ranking.top(name, undefined, 0, 20);
      for (const row of top.items)
        expect({ row: row.item, previous: row.previousRank }).toEqual({
          row: row.item,
          previous: previous.get(row.item) ?? null,
        });
    }

    /** The latest archive and the kept periods, newest first. */
    async function compareArchives(name: string, history: GroupHistoryModel): Promise<void> {
      const kept = [...history.kept].reverse();
      const periods = kept.map(({ at, rows }) => ({ from: at, to: at + DAY_SEC, items: rows }));
      const page = await setup.ranking.archives(name, undefined, 10, undefined);
      expect(
        page.periods.map(({ from, to, items }) => ({
          from,
          to,
          items: items.map(({ rank, item, score }) => ({ rank, item, score })),
        })),
      ).toEqual(periods);
      if (periods.length === 0) {
        await expect(setup.ranking.archive(name, undefined, undefined, { offset: 0, limit: 10 })).rejects.toThrow(
          /archive/i,
        );
        return;
      }
      const latest = await setup.ranking.archive(name, undefined, undefined, { offset: 0, limit: 10 });
      expect({
        from: latest.from,
        items: latest.items.map(({ rank, item, score }) => ({ rank, item, score })),
      }).toEqual({
        from: periods[0].from,
        items: periods[0].items,
      });
      compared.archives += periods.reduce((rows, period) => rows + period.items.length, 0);
    }
  },
);
