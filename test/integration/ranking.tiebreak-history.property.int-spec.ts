import fc from 'fast-check';
import type { BestAggregate } from '../support/best-model';
import { StrictPairs, TiebreakModel, type PairRow } from '../support/tiebreak-model';
import { shardOf } from '../../src/ranking/core/shard-math';
import { NotFoundError } from '../../src/common/errors';
import { useRankingService } from '../../harness/ranking';
import { SHARD_CELLS } from '../../harness/redis';

/**
 * History of `tiebreak` boards against a brute-force model (property, 1 and 3 shards, one Redis and a
 * Cluster): after random scores with tiebreaks, late events and clock moves, every read's listing is
 * the model's pairs in its order (with `ties: first`, StrictPairs: equal pairs in an order they may
 * have been reached in), and at each new snapshot the window's history is the listing the live read
 * answered last before its boundary, cut to the snapshot's top, ranked as it was; each item's history
 * point and each row's previousRank is its rank there (null past the top).
 */
const TOP = 4;
const WINDOWS = [
  { name: 'w1', periodSec: 60, intervalSec: 20 },
  { name: 'w2', periodSec: 90, intervalSec: 30 },
];
const ITEMS = ['a', 'b', 'c', 'd', 'é', 'a b/c'];

type Step =
  { kind: 'score'; item: string; score: number; tiebreak: number; backMs: number } | { kind: 'advance'; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('score' as const),
      item: fc.constantFrom(...ITEMS),
      score: fc.integer({ min: -1, max: 1 }),
      tiebreak: fc.integer({ min: -2, max: 2 }),
      backMs: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(30_000) }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 45_000 }) }),
  },
);

/** Always among the runs: equal scores split by tiebreaks and equal pairs, then a boundary under them. */
const PAIRS_TIE_AND_SPLIT: [number, Step[]] = [
  1_600_000_000_000,
  [
    ...ITEMS.map((item, i): Step => ({ kind: 'score', item, score: 1, tiebreak: i % 3, backMs: 0 })),
    { kind: 'advance', ms: 20_000 },
    { kind: 'score', item: 'a', score: 1, tiebreak: -2, backMs: 0 },
    { kind: 'advance', ms: 30_000 },
  ],
];

const CASES = SHARD_CELLS;
const SHAPES: Array<[BestAggregate, 'asc' | 'desc', 'asc' | 'desc', 'shared' | 'first']> = [
  ['max', 'desc', 'desc', 'shared'],
  ['min', 'asc', 'asc', 'shared'],
  ['last', 'asc', 'desc', 'shared'],
  ['max', 'asc', 'desc', 'first'],
  ['min', 'asc', 'asc', 'first'],
];

const DAY_MS = 86_400_000;
/** The calendar window keeping archives, as the model holds it: one slot a UTC day. */
const DAY = { name: 'day', periodSec: 86_400, intervalSec: 86_400 };

/** The live listing read last in a window's slot: what its snapshot at the slot's end must hold. */
type Seen = { endSec: number; rows: PairRow[] };

describe.each(CASES)('tiebreak history against a brute-force model (property, %s, %i shard(s))', (topology, shards) => {
  const setup = useRankingService(topology);
  const { clock } = setup;
  let board = 0;
  let checked = 0;

  it.each(SHAPES)('%s, tiebreak %s, order %s, ties %s: history ranks the pairs', async (aggregate, tb, order, ties) => {
    checked = 0;
    await fc.assert(
      fc.asyncProperty(
        // Within a day's first 20 hours: the steps (at most 9 minutes) stay in one calendar period.
        fc
          .tuple(fc.integer({ min: 18_500, max: 21_900 }), fc.integer({ min: 0, max: 72_000_000 }))
          .map(([day, ms]) => day * DAY_MS + ms),
        fc.array(step, { minLength: 1, maxLength: 12 }),
        async (startMs, steps) => {
          const name = `tbh${board++}`;
          clock.setMs(startMs);
          const windows = [
            ...WINDOWS.map((w) => ({
              name: w.name,
              period: w.periodSec,
              interval: w.intervalSec,
              snapshots: { keep: 3, top: TOP },
            })),
            { name: 'day', calendar: 'day', archive: { keep: 2, top: TOP } },
          ];
          await setup.ranking.putBoard({ name, windows, shards, aggregate, order, ties, tiebreak: { order: tb } });
          const model = new TiebreakModel([...WINDOWS, DAY], aggregate, tb, order);
          const strict = ties === 'first' ? new StrictPairs(model, (id) => shardOf(id, shards)) : undefined;
          const seen = new Map<string, Seen>();
          for (const s of steps) {
            const atMs = clock.nowMs() - (s.kind === 'score' ? s.backMs : 0);
            const lands = s.kind === 'score' && model.lands(clock.nowMs(), atMs);
            apply(model, s, strict);
            if (lands) await setup.ranking.score(name, s.item, s.score, undefined, undefined, atMs / 1000, s.tiebreak);
            for (const w of WINDOWS) await compare(name, model, w, seen, strict);
          }
          await compareArchive(name, model, strict);
          await setup.ranking.deleteBoard(name);
          // The archives' copies of the pair order go with it.
          expect(await setup.redis.dataKeys(`board:${name}[}/]*`)).toEqual([]);
        },
      ),
      // 4 runs a shape: these mistakes planted in snapshot_lib.lua's pair rows each failed 6-10 of the
      // 20 blocks (equal scores of other tiebreaks ranked alike, the snapshot cut a row short); 10 runs
      // found no more.
      { numRuns: 4, examples: [PAIRS_TIE_AND_SPLIT] },
    );
    // Not vacuous: snapshots holding rows of equal scores were compared.
    expect(checked).toBeGreaterThan(3);
  });

  function apply(model: TiebreakModel, s: Step, strict?: StrictPairs): void {
    const nowMs = clock.nowMs();
    if (s.kind === 'advance') {
      clock.advanceMs(s.ms);
      strict?.settle(clock.nowMs());
      return;
    }
    const atMs = nowMs - s.backMs;
    if (!model.lands(nowMs, atMs)) return;
    strict?.settle(nowMs);
    model.record(nowMs, atMs, s.item, s.score, s.tiebreak);
    strict?.settle(nowMs);
  }

  async function compare(
    name: string,
    model: TiebreakModel,
    w: (typeof WINDOWS)[number],
    seen: Map<string, Seen>,
    strict?: StrictPairs,
  ) {
    const nowSec = Math.floor(clock.nowMs() / 1000);
    const history = await latest(name, w.name);
    const before = seen.get(w.name);
    const top = await setup.ranking.top(name, w.name, 0, 20);
    const rows = top.items.map(pairRow);
    const pairs = model.listing(w.name, clock.nowMs());
    const pairOf = (row: PairRow) => [row.item, row.score, row.tiebreak, row.rank];
    if (strict) {
      expect(rows.map((r) => [r.score, r.tiebreak])).toEqual(pairs.map((r) => [r.score, r.tiebreak]));
      for (let i = 1; i < rows.length; i++)
        expect(strict.mayPrecede(w.name, rows[i - 1].item, rows[i].item)).toBe(true);
      expect(rows.map((r) => r.rank)).toEqual(rows.map((_, i) => i + 1));
    } else {
      expect(rows.map(pairOf)).toEqual(pairs.map(pairOf));
    }
    if (history && before && history.at === before.endSec) {
      // Rows carry their pair's tiebreak beside the score, as the live rows did.
      const kept = before.rows.slice(0, TOP);
      expect([w.name, history.at, history.items]).toEqual([w.name, before.endSec, kept]);
      if (kept.some((row, i) => i > 0 && kept[i - 1].score === row.score)) checked++;
      for (const item of ITEMS) {
        const { points } = await setup.ranking.itemHistory(name, w.name, item, history.at, history.at);
        const row = kept.find((r) => r.item === item);
        const point = row ? { rank: row.rank, tiebreak: row.tiebreak } : { rank: null };
        expect([w.name, item, points.map((p) => ({ rank: p.rank, tiebreak: p.tiebreak }))]).toEqual([
          w.name,
          item,
          [point],
        ]);
      }
    }
    if (history) {
      const previous = top.items.map((row) => [row.item, row.previousRank]);
      expect(previous).toEqual(
        top.items.map((row) => [row.item, history.items.find((h) => h.item === row.item)?.rank ?? null]),
      );
    }
    const slotStart = nowSec - (nowSec % w.intervalSec);
    seen.set(w.name, { endSec: slotStart + w.intervalSec, rows });
  }

  /**
   * The day's live listing (checked against the model), then the next day: its archive is that listing
   * cut to the top, ranked as it was, and so are the previous ranks of the next day's rows.
   */
  async function compareArchive(name: string, model: TiebreakModel, strict?: StrictPairs) {
    const live = await setup.ranking.top(name, 'day', 0, 20);
    const pairs = model.listing('day', clock.nowMs());
    expect(live.items.map(pairRow).map((r) => [r.score, r.tiebreak])).toEqual(pairs.map((r) => [r.score, r.tiebreak]));
    if (!strict) expect(live.items.map(pairRow)).toEqual(pairs);
    clock.setMs((Math.floor(clock.nowMs() / DAY_MS) + 1) * DAY_MS + 1000);
    const kept = live.items.slice(0, TOP).map(({ rank, item, score, tiebreak }) => ({ rank, item, score, tiebreak }));
    const { periods } = await setup.ranking.archives(name, 'day', 10, undefined);
    expect(periods.map((period) => period.items)).toEqual(kept.length > 0 ? [kept] : []);
    for (const item of ITEMS) await setup.ranking.score(name, item, 0, undefined, undefined, undefined, 0);
    const next = await setup.ranking.top(name, 'day', 0, 20);
    expect(next.items.map((row) => [row.item, row.previousRank]).sort()).toEqual(
      ITEMS.map((item) => [item, kept.find((row) => row.item === item)?.rank ?? null]).sort(),
    );
  }

  /** The window's latest snapshot (undefined: none kept yet). */
  async function latest(name: string, window: string) {
    try {
      return await setup.ranking.history(name, window, undefined);
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }
});

function pairRow(row: { rank: number; item: string; score: number; tiebreak?: number }): PairRow {
  return { rank: row.rank, item: row.item, score: row.score, tiebreak: row.tiebreak as number };
}

describe('tiebreak history kept before marks were stored (single node, 1 shard)', () => {
  const setup = useRankingService('single');

  it('a snapshot whose rows hold no mark reads as taken: ranked by score, items through it too', async () => {
    setup.clock.setMs(1_600_000_000_000);
    const windows = [{ name: 'm', period: 180, interval: 60, snapshots: { keep: 3, top: 4 } }];
    await setup.ranking.putBoard({ name: 'old', windows, aggregate: 'max', tiebreak: { order: 'desc' } });
    for (const [item, tiebreak] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const)
      await setup.ranking.score('old', item, 5, undefined, undefined, undefined, tiebreak);
    setup.clock.advanceMs(60_000);
    const taken = await setup.ranking.history('old', 'm', undefined);
    expect(taken.items.map((row) => [row.item, row.rank])).toEqual([
      ['c', 1],
      ['b', 2],
      ['a', 3],
    ]);
    const [key] = (await setup.redis.dataKeys('board:old}*')).filter((k) => k.includes(':snap:'));
    // The format before marks: "\x1e<item>\x1f<score>\x1f<n>", equal scores in descending id order.
    await setup.redis.client.set(key, '\x1ec\x1f5\x1f1\x1eb\x1f5\x1f2\x1ea\x1f5\x1f3', 'KEEPTTL');
    const read = await setup.ranking.history('old', 'm', undefined);
    expect(read.items.map((row) => [row.item, row.rank])).toEqual([
      ['c', 1],
      ['b', 1],
      ['a', 1],
    ]);
    const { points } = await setup.ranking.itemHistory('old', 'm', 'a', undefined, undefined);
    expect(points.map((point) => point.rank)).toEqual([1]);
  });
});
