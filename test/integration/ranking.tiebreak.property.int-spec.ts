import fc from 'fast-check';
import type { BestAggregate } from '../support/best-model';
import { StrictPairs, TiebreakModel, type PairRow } from '../support/tiebreak-model';
import { shardOf } from '../../src/ranking/core/shard-math';
import { useRankingService } from '../../harness/ranking';
import { SHARD_CELLS } from '../../harness/redis';

/**
 * `tiebreak` boards against a brute-force model (property, 1 and 3 shards, one Redis and a Cluster),
 * of either board order (`order: asc`: the lowest score first, then the tiebreak by its own order):
 * after random scores with tiebreaks (few values, so equal scores, equal pairs, 0 and negatives are
 * common; some writes send none: 0), late events and clock moves that expire slots, every read answers
 * the model's pairs in the model's order and ranks: top (two pages), each item, around each listed
 * item, a lookup, the would-be rank of every held pair and its neighbours, and each write's answer.
 * With `ties: first` ("most points, then fastest time, then whoever got there first") ranks are strict
 * and equal pairs list in the order they were reached (StrictPairs): the top listing is checked
 * against it, then every other read against that listing.
 */
const WINDOWS = [
  { name: 'w1', periodSec: 60, intervalSec: 20 },
  { name: 'w2', periodSec: 90, intervalSec: 30 },
];
const ITEMS = ['a', 'b', 'c', 'd', 'é', 'a b/c'];

type Step =
  | { kind: 'score'; item: string; score: number; tiebreak: number | undefined; backMs: number }
  | { kind: 'advance'; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('score' as const),
      item: fc.constantFrom(...ITEMS),
      score: fc.integer({ min: -1, max: 2 }),
      tiebreak: fc.oneof(
        { weight: 1, arbitrary: fc.constant(undefined) },
        { weight: 4, arbitrary: fc.integer({ min: -2, max: 2 }) },
        { weight: 1, arbitrary: fc.constantFrom(-1_000_000_000_000_000, 1_000_000_000_000_000) },
      ),
      backMs: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(30_000) }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 45_000 }) }),
  },
);

/**
 * Always among the runs: every item scores 1 with tiebreaks that tie some pairs and split others,
 * then one improves its tiebreak alone (a max / min board keeps the better pair of equal scores), then
 * a slot expires under them.
 */
const PAIRS_TIE_AND_SPLIT: [number, Step[]] = [
  1_600_000_000_000,
  [
    ...ITEMS.map((item, i): Step => ({ kind: 'score', item, score: 1, tiebreak: i % 3, backMs: 0 })),
    { kind: 'advance', ms: 20_000 },
    { kind: 'score', item: 'a', score: 1, tiebreak: 5, backMs: 0 },
    { kind: 'score', item: 'b', score: 1, tiebreak: -5, backMs: 0 },
    { kind: 'advance', ms: 45_000 },
  ],
];

const CASES = SHARD_CELLS;
type Ties = 'shared' | 'first';
const SHAPES: Array<[BestAggregate, 'asc' | 'desc', 'asc' | 'desc', Ties]> = [
  ['max', 'desc', 'desc', 'shared'],
  ['min', 'asc', 'desc', 'shared'],
  ['last', 'desc', 'desc', 'shared'],
  // Races and speedruns: the lowest time, then the earliest date.
  ['min', 'asc', 'asc', 'shared'],
  ['max', 'desc', 'asc', 'shared'],
  ['last', 'asc', 'asc', 'shared'],
  // Competitions: most points, then the fastest time, then whoever got there first.
  ['max', 'asc', 'desc', 'first'],
  ['max', 'desc', 'desc', 'first'],
  ['min', 'asc', 'asc', 'first'],
  ['last', 'desc', 'asc', 'first'],
];

describe.each(CASES)('tiebreak against a brute-force model (property, %s, %i shard(s))', (topology, shards) => {
  const setup = useRankingService(topology);
  const { clock } = setup;
  let board = 0;
  let tiedPairs = 0;

  it.each(SHAPES)(
    '%s, tiebreak %s, order %s, ties %s: every read orders and ranks the pairs',
    async (aggregate, tb, order, ties) => {
      tiedPairs = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
          fc.array(step, { minLength: 1, maxLength: 14 }),
          async (startMs, steps) => {
            const name = `tb${board++}`;
            clock.setMs(startMs);
            const windows = WINDOWS.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec }));
            await setup.ranking.putBoard({ name, windows, shards, aggregate, order, ties, tiebreak: { order: tb } });
            const model = new TiebreakModel(WINDOWS, aggregate, tb, order);
            const strict = ties === 'first' ? new StrictPairs(model, (id) => shardOf(id, shards)) : undefined;
            for (const s of steps) {
              const written = await apply(name, model, s, strict);
              for (const w of WINDOWS) await compare(name, model, w.name, strict, written);
            }
            await setup.ranking.deleteBoard(name);
            // Its pair order and kept tiebreaks go with it.
            expect(await setup.redis.dataKeys(`board:${name}[}/]*`)).toEqual([]);
          },
        ),
        // 4 runs a shape, 10 shapes x 3 cells (SHARD_CELLS). Each of these mistakes planted in tiebreak_lib.lua
        // failed 8-12 of the 40 tests of 4 cells, a one-shard Cluster's included (a rank counting equal pairs
        // ahead, on desc or on asc boards; an arriving pair's place; asc tie marks left unturned); 12 runs
        // cost 2.5 times as much and found no more. A desc rank counting equal pairs ahead fails 9 of the
        // 30 (3 shapes in each cell).
        { numRuns: 4, examples: [PAIRS_TIE_AND_SPLIT] },
      );
      // Not vacuous: rows sharing a score but not a tiebreak, and rows sharing a pair, were read.
      expect(tiedPairs).toBeGreaterThan(10);
    },
  );

  /** Applies a step; a strict board's write answer is compared with the listing read next (compare). */
  async function apply(name: string, model: TiebreakModel, s: Step, strict?: StrictPairs): Promise<Written> {
    const nowMs = clock.nowMs();
    if (s.kind === 'advance') {
      clock.advanceMs(s.ms);
      strict?.settle(clock.nowMs());
      return undefined;
    }
    const atMs = nowMs - s.backMs;
    if (!model.lands(nowMs, atMs)) return;
    strict?.settle(nowMs);
    model.record(nowMs, atMs, s.item, s.score, s.tiebreak ?? 0);
    strict?.settle(nowMs);
    const answer = await setup.ranking.score(name, s.item, s.score, undefined, undefined, atMs / 1000, s.tiebreak);
    if (strict) return { item: s.item, windows: answer.body.windows };
    // One expect for all windows: building an expectation costs more than comparing a few rows.
    const gotRows = WINDOWS.map((w) => {
      const got = answer.body.windows[w.name];
      return [w.name, s.item, got?.rank ?? null, got?.tiebreak];
    });
    const wantedRows = WINDOWS.map((w) => {
      const row = model.listing(w.name, nowMs).find((r) => r.item === s.item);
      return [w.name, s.item, row?.rank ?? null, row?.tiebreak];
    });
    expect(gotRows).toEqual(wantedRows);
  }

  async function compare(
    name: string,
    model: TiebreakModel,
    window: string,
    strict?: StrictPairs,
    written?: Written,
  ): Promise<void> {
    const pairs = model.listing(window, clock.nowMs());
    tiedPairs += pairs.filter((row, i) => i > 0 && pairs[i - 1].score === row.score).length;
    // The reads of one step are sent together (nothing is written between them): one socket write
    // for all of them (auto-pipelining) instead of a round trip each.
    const [top, page, reads] = await Promise.all([
      setup.ranking.top(name, window, 0, 20),
      setup.ranking.top(name, window, 1, 2),
      Promise.all(ITEMS.map((item) => setup.ranking.item(name, window, item))),
    ]);
    const expected = strict ? strictListing(strict, window, pairs, top.items.map(pairRow), written) : pairs;
    expect(top.items.map(pairRow)).toEqual(expected);
    expect(page.items.map(pairRow)).toEqual(expected.slice(1, 3));
    expectItems(reads, expected);
    const ids = [...ITEMS, 'absent'];
    const [arounds, looked] = await Promise.all([
      Promise.all(expected.map((row) => setup.ranking.around(name, window, row.item, 1))),
      setup.lookup.lookup({ name, window, items: ids, relative: false, withData: false }),
    ]);
    expect(arounds.map((around) => around.items.map(pairRow))).toEqual(
      expected.map((_, i) => expected.slice(Math.max(0, i - 1), i + 2)),
    );
    expect(looked.items.map((row) => [row.item, row.rank, row.tiebreak])).toEqual(
      ids.map((id) => {
        const row = expected.find((r) => r.item === id);
        return [id, row?.rank ?? null, row?.tiebreak];
      }),
    );
    await expectRanks(name, strict ?? model, window, expected);
  }

  /** Each item's read: its rank, score and tiebreak in the expected listing (none, 0 and none when absent). */
  function expectItems(reads: Awaited<ReturnType<typeof setup.ranking.item>>[], expected: PairRow[]): void {
    const got = ITEMS.map((item, k) => {
      const read = reads[k];
      return { item, rank: read.rank, score: read.score, tiebreak: (read as { tiebreak?: number }).tiebreak };
    });
    const wanted = ITEMS.map((item) => {
      const row = expected.find((r) => r.item === item);
      return { item, rank: row?.rank ?? null, score: row?.score ?? 0, tiebreak: row?.tiebreak };
    });
    expect(got).toEqual(wanted);
  }

  /**
   * The service's strict listing, once checked against the model: the pairs in the model's order,
   * ranks 1..n, equal pairs in an order they may have been reached in, and the write's answer ranking
   * its item where the listing puts it (nothing moved since).
   */
  function strictListing(strict: StrictPairs, window: string, pairs: PairRow[], got: PairRow[], written?: Written) {
    const pairOf = (row: PairRow) => [row.score, row.tiebreak];
    expect(got.map(pairOf)).toEqual(pairs.map(pairOf));
    expect(got.map((row) => row.rank)).toEqual(got.map((_, i) => i + 1));
    expect(got.map((row) => row.item).sort()).toEqual(pairs.map((row) => row.item).sort());
    const neighbours = got.slice(1).map((row, i) => [got[i].item, row.item]);
    expect(neighbours.map(([a, b]) => [a, b, strict.mayPrecede(window, a, b)])).toEqual(
      neighbours.map(([a, b]) => [a, b, true]),
    );
    if (written) {
      const rank = got.find((row) => row.item === written.item)?.rank ?? null;
      expect([window, written.item, written.windows[window]?.rank ?? null]).toEqual([window, written.item, rank]);
    }
    return got;
  }

  /** GET …/rank of each held pair and its neighbours (tiebreak ± 1, scores between): 1 + the pairs ahead. */
  async function expectRanks(name: string, model: TiebreakModel | StrictPairs, window: string, expected: PairRow[]) {
    const probes = expected.flatMap(({ score, tiebreak }) => [
      { score, tiebreak },
      { score, tiebreak: tiebreak + 1 },
      { score, tiebreak: tiebreak - 1 },
      { score: score + 0.5, tiebreak },
      { score: score - 0.5, tiebreak },
    ]);
    const answers = await Promise.all(probes.map((probe) => setup.standing.rank({ name, window, ...probe })));
    expect(probes.map((probe, k) => ({ ...probe, rank: answers[k].rank }))).toEqual(
      probes.map((probe) => ({ ...probe, rank: model.rankOf(expected, probe) })),
    );
  }
});

/** A strict board's write answer, compared with the listing read after it. */
type Written = { item: string; windows: Record<string, { rank: number | null } | undefined> } | undefined;

function pairRow(row: { rank: number; item: string; score: number; tiebreak?: number }): PairRow {
  return { rank: row.rank, item: row.item, score: row.score, tiebreak: row.tiebreak as number };
}
