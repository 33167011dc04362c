import fc from 'fast-check';
import { validateConfig } from '../../common/config';
import { AGGREGATES } from '../options/aggregate/aggregate';
import { WINDOWS_PER_BOARD } from './ranking.limits';
import { VIEWS_PER_BOARD } from '../options/views/views.limits';
import { SEGMENTS_PER_EVENT } from '../options/segments/segments.limits';
import { CAP_PER_ITEM } from '../options/actor-caps/actor-caps.option';
import {
  adminStepUnits,
  batchCost,
  callCost,
  callEntries,
  COSTLIEST_ENTRY,
  CostedBoard,
  CostedEntry,
  coalescedWork,
  costliestWrite,
  entryCost,
  entryWork,
  segmentsWithin,
} from './write-cost';

const boardOf = (windows: number, options: Partial<CostedBoard> = {}): CostedBoard => ({
  windows: Array.from({ length: windows }),
  views: [],
  ...options,
});
const plain = (count: number): CostedEntry[] => Array.from({ length: count }, () => ({}));
const segments = (count: number) => Array.from({ length: count }, (_, i) => `s${i}`);
const DEFAULT_BOUND = validateConfig({}).WRITE_COST_PER_CALL;

describe('write cost', () => {
  it('weighs a plain entry one unit per window', () => {
    expect(entryCost({}, boardOf(3))).toBe(3);
    expect(callCost(plain(1000), boardOf(3))).toBe(3000);
  });

  it('takes at the default bound 1 000 plain entries on one window, and what fits in ~5 ms on more', () => {
    expect(callCost(plain(1000), boardOf(1))).toBeLessThanOrEqual(DEFAULT_BOUND);
    // 285 late scores on a last board of 8 windows measured 20.4 ms at 7 980 units (load 1.4): 2.56 µs a unit.
    expect(DEFAULT_BOUND * 2.7e-3).toBeLessThanOrEqual(5);
  });

  it('refuses issue #45 rows 1 and 3 at the default bound', () => {
    // Row 3: 900 items × 8 segments on 3 windows (one call of 167-195 ms).
    const row3 = Array.from({ length: 900 }, () => ({ segments: segments(8) }));
    // Each segment place at its floor (3 × 5.5 + 10): 3 + 8 × 26.5 units an entry.
    expect(callCost(row3, boardOf(3))).toBe(900 * (3 + 8 * 26.5));
    expect(callCost(row3, boardOf(3))).toBeGreaterThan(DEFAULT_BOUND);
    // Row 1: 1 000 scores on a last board of 8 windows (a late one weighs what a current one does).
    expect(callCost(plain(1000), boardOf(8, { aggregate: 'last' }))).toBeGreaterThan(DEFAULT_BOUND);
  });

  it('weighs views, segments, scores, ties first and actors as measured', () => {
    expect(entryCost({}, boardOf(2, { views: [{}, {}] }))).toBe(2 + 2 * 2.5);
    // A segment place weighs 3 a result, times what options add, and at least SEGMENT_PLACE_FLOOR.
    expect(entryCost({ segments: segments(2) }, boardOf(3))).toBe(3 + 2 * (3 * 5.5 + 10));
    expect(entryCost({ segments: segments(2), actor: 'a' }, boardOf(3))).toBe(3 * 6 + 2 * (3 * 18 + 10));
    const strict = boardOf(3, { ties: 'first', views: [{}] });
    expect(entryCost({ segments: segments(2), actor: 'a' }, strict)).toBe(5.5 * 10 * (1 + 3 * 2));
    expect(entryCost({}, boardOf(4, { aggregate: 'last' }))).toBe(4 * 11);
    expect(entryCost({}, boardOf(4, { aggregate: 'min' }))).toBe(4 * 8);
    expect(entryCost({}, boardOf(1, { ties: 'first' }))).toBe(5);
    expect(entryCost({ actor: 'a', segments: segments(1) }, boardOf(1))).toBe(6 + (18 + 10));
  });

  it("weighs a board's costliest write: every segment an event may name and an actor, when the board takes them", () => {
    const full = {
      ...boardOf(WINDOWS_PER_BOARD.max, { views: Array.from({ length: VIEWS_PER_BOARD.max }), ties: 'first' as const }),
      capPerItem: CAP_PER_ITEM.max,
    };
    const costliest = entryCost({ segments: segments(SEGMENTS_PER_EVENT.max), actor: 'a' }, full);
    expect(COSTLIEST_ENTRY).toBe(costliest);
    expect(costliestWrite({ ...full, segmentsMax: 10, actors: true })).toBe(costliest);
    expect(costliestWrite({ ...full, segmentsMax: 10 })).toBe(entryCost({ segments: segments(8) }, full));
    expect(costliestWrite(full)).toBe(entryCost({}, full));
    expect(costliestWrite(full)).toBeLessThanOrEqual(DEFAULT_BOUND);
    expect(costliestWrite({ ...full, segmentsMax: 10 })).toBeGreaterThan(DEFAULT_BOUND);
  });

  it("a batch's cost is its costliest shard's call, and says how many such entries fit", () => {
    const board = boardOf(3);
    const heavy = { segments: segments(8) }; // 3 + 8 × 26.5 = 215 units
    const { costliestCall, entriesWithin } = batchCost([plain(10), [heavy, heavy]], board, 8000);
    expect(costliestCall).toBe(430);
    expect(entriesWithin).toBe(Math.floor(8000 / 215));
    expect(batchCost([[heavy]], board, 10).entriesWithin).toBe(1);
    // A call of one entry is the board's single write, bounded when the board was declared.
    expect(batchCost([[heavy], [heavy]], board, 10).costliestCall).toBe(0);
  });

  it('says how many segments an entry may name within the bound on a board declared past it', () => {
    const full = {
      ...boardOf(WINDOWS_PER_BOARD.max, { views: Array.from({ length: VIEWS_PER_BOARD.max }), ties: 'first' as const }),
      capPerItem: CAP_PER_ITEM.max,
    };
    // 28 results × 11 a place with an actor: 1 232 units in 4 places (one segment), 2 156 in 7.
    expect(segmentsWithin({ actor: 'a' }, full, DEFAULT_BOUND)).toBe(1);
    expect(segmentsWithin({}, full, DEFAULT_BOUND)).toBe(3);
    expect(segmentsWithin({}, boardOf(3), DEFAULT_BOUND)).toBe(SEGMENTS_PER_EVENT.max);
    expect(segmentsWithin({ actor: 'a' }, full, 100)).toBe(-1);
    for (const bound of [300, 1000, DEFAULT_BOUND, 5000]) {
      const named = segmentsWithin({ actor: 'a' }, full, bound);
      if (named >= 0) expect(entryCost({ actor: 'a', segments: segments(named) }, full)).toBeLessThanOrEqual(bound);
      if (named < SEGMENTS_PER_EVENT.max)
        expect(entryCost({ actor: 'a', segments: segments(named + 1) }, full)).toBeGreaterThan(bound);
    }
  });

  it('an admin step does a tenth of the commands a write call may run (0.8 a unit), following WRITE_COST_PER_CALL', () => {
    expect(adminStepUnits(DEFAULT_BOUND)).toBe(Math.floor(DEFAULT_BOUND * 0.08));
    expect(adminStepUnits(1800)).toBe(144);
    expect(adminStepUnits(3600)).toBe(288);
  });
});

describe('write cost (properties)', () => {
  const board = fc.record({
    windows: fc.integer({ min: 1, max: WINDOWS_PER_BOARD.max }).map((n) => Array.from({ length: n })),
    views: fc.integer({ min: 0, max: VIEWS_PER_BOARD.max }).map((n) => Array.from({ length: n })),
    aggregate: fc.constantFrom(...AGGREGATES),
    ties: fc.constantFrom('shared' as const, 'first' as const),
  });
  const entry: fc.Arbitrary<CostedEntry> = fc.record(
    {
      segments: fc.integer({ min: 0, max: SEGMENTS_PER_EVENT.max }).map(segments),
      actor: fc.constant('a'),
    },
    { requiredKeys: [] },
  );

  it('is additive over entries, and a split batch weighs what the whole does', () => {
    fc.assert(
      fc.property(board, fc.array(entry, { maxLength: 50 }), fc.nat(), (b, entries, cut) => {
        const at = entries.length === 0 ? 0 : cut % entries.length;
        const whole = callCost(entries, b);
        expect(callCost(entries.slice(0, at), b) + callCost(entries.slice(at), b)).toBeCloseTo(whole, 9);
        if (entries.length > 1) expect(batchCost([entries], b, DEFAULT_BOUND).costliestCall).toBeCloseTo(whole, 9);
      }),
    );
  });

  it('grows with every option: more windows, views, segments, an actor or ties first never weigh less', () => {
    fc.assert(
      fc.property(board, entry, (b, e) => {
        const cost = entryCost(e, b);
        expect(cost).toBeGreaterThanOrEqual(b.windows.length);
        // Segments and actors are for sum boards only.
        const takes = b.aggregate === 'sum' || (e.actor === undefined && (e.segments?.length ?? 0) === 0);
        if (takes) expect(cost).toBeLessThanOrEqual(COSTLIEST_ENTRY);
        expect(entryCost(e, { ...b, windows: [...b.windows, undefined] })).toBeGreaterThan(cost);
        expect(entryCost(e, { ...b, views: [...b.views, undefined] })).toBeGreaterThan(cost);
        expect(entryCost({ ...e, segments: [...(e.segments ?? []), 'x'] }, b)).toBeGreaterThan(cost);
        expect(entryCost({ ...e, actor: 'a' }, b)).toBeGreaterThanOrEqual(cost);
        expect(entryCost(e, { ...b, ties: 'first' })).toBeGreaterThanOrEqual(cost);
      }),
    );
  });

  it('a batch within the bound has every call within it; entriesWithin such entries always fit', () => {
    fc.assert(
      fc.property(board, entry, fc.integer({ min: 7000, max: 100_000 }), (b, e, bound) => {
        // Segments and actors are for sum boards only: a max / min / last entry never carries them.
        fc.pre(b.aggregate === 'sum' || (e.actor === undefined && (e.segments?.length ?? 0) === 0));
        const { entriesWithin } = batchCost([[e]], b, bound);
        expect(
          callCost(
            Array.from({ length: entriesWithin }, () => e),
            b,
          ),
        ).toBeLessThanOrEqual(bound);
        expect(
          callCost(
            Array.from({ length: entriesWithin + 1 }, () => e),
            b,
          ),
        ).toBeGreaterThan(bound);
      }),
    );
  });

  describe("a call's work", () => {
    // The costliest segmented board (the harness's wc-seg): 4 windows, a unique view, ties first, capped actors.
    const segmented = boardOf(4, { views: [{}], ties: 'first', actors: true, capPerItem: CAP_PER_ITEM.max });
    const withActor = (named: number): CostedEntry => ({ actor: 'a', segments: segments(named) });
    const perCall = (entry: CostedEntry, count: number) =>
      callEntries(
        Array.from({ length: count }, () => entry),
        0,
        segmented,
        DEFAULT_BOUND,
      );

    it('weighs a plain entry its cost: a plain batch keeps its calls', () => {
      expect(entryWork({}, segmented)).toBe(entryCost({}, segmented));
      expect(callEntries(plain(1000), 0, boardOf(1), DEFAULT_BOUND)).toBe(1000);
    });

    it('cuts the batches the cost bound takes on that board into calls of about 10 M instructions', () => {
      // Each at the most the bound takes: 25 entries with an actor, 6 in a segment each, 3 in two.
      expect([0, 1, 2].map((named) => batchCost([[withActor(named)]], segmented, DEFAULT_BOUND).entriesWithin)).toEqual(
        [25, 6, 3],
      );
      // bench/write-instructions.ts: 9 with an actor ran 9.3 M, 3 in a segment each 9.1 M.
      expect([perCall(withActor(0), 25), perCall(withActor(1), 6), perCall(withActor(2), 3)]).toEqual([9, 3, 1]);
    });

    it('carries at least one entry a call, and the rest from where the last call ended', () => {
      expect(perCall(withActor(8), 2)).toBe(1);
      const entries = [withActor(0), withActor(1), withActor(1), withActor(1), withActor(0)];
      expect(callEntries(entries, 0, segmented, DEFAULT_BOUND)).toBe(3);
      expect(callEntries(entries, 3, segmented, DEFAULT_BOUND)).toBe(2);
    });
  });

  describe("a coalesced increment's work", () => {
    // A call's requests at the default bound, as the coalescer (at most MAX_COALESCED_INCREMENTS) forms them.
    const perCall = (board: CostedBoard, entry: CostedEntry = {}) =>
      Math.min(100, Math.floor(DEFAULT_BOUND / coalescedWork(entry, board)));
    // wc-sum's shape: 8 windows, 8 views, ties first, capped actors (168 units an entry).
    const sum = boardOf(8, { views: Array.from({ length: 8 }), ties: 'first', actors: true, capPerItem: 1000 });

    it('keeps the calls of one-window boards full: 100 requests (4.6 M instructions on the plain path)', () => {
      expect(perCall(boardOf(1))).toBe(100);
    });

    it('closes a call of existing items near 10 M on 8 windows with views or ties first (bench/write-instructions.ts)', () => {
      // 8 views: 0.91 M a request (64 a call were 58.9 M); ties first 1.10 M (45: 49.7 M); wc-sum's shape 1.37 M
      // (10: 14.5 M); 8 windows alone 0.30 M on the plain path (100: 30.6 M).
      const views = boardOf(8, { views: Array.from({ length: 8 }) });
      expect([views, boardOf(8, { ties: 'first' }), sum, boardOf(8)].map((board) => perCall(board))).toEqual([
        9, 8, 6, 14,
      ]);
      expect(entryWork({}, sum)).toBe(168);
    });

    it("weighs an actor, segments and other options as entryWork does, beside the request's windows", () => {
      const seg = boardOf(4, { views: [{}], ties: 'first', actors: true, capPerItem: CAP_PER_ITEM.max });
      const named = { actor: 'a', segments: segments(1) };
      const untied = { ...seg, ties: undefined };
      expect(coalescedWork(named, seg)).toBeCloseTo(2 + 4 * (15 + 10.5) + 8 + entryWork(named, untied) - 4 - 2.5);
      expect(coalescedWork({}, boardOf(2, { aggregate: 'last' }))).toBe(2 + 2 * 15 + 2 * 10);
    });
  });
});
