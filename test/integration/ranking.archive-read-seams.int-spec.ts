import { FakeClock } from '../../harness/clock';
import type { DomainError } from '../../src/common/errors';
import { ArchivesStore } from '../../src/ranking/calendar/archives.store';
import type { ArchiveRows } from '../../src/ranking/calendar/calendar.functions';
import { HistoryStore } from '../../src/ranking/history/history.store';
import { listingCountsOf } from '../../src/ranking/history/listing-counts';
import { LISTING_UNITS_PER_CALL } from '../../src/ranking/core/ranking.limits';
import { ModerationService } from '../../src/ranking/moderation/moderation.service';
import type { RedisFunctions } from '../../src/redis/redis-functions';
import { useRankingGraph } from '../support/ranking-graph';

// A few rows a call: a period of ITEMS rows is read in several calls, the same code path as 5 000.
jest.mock('../../src/ranking/options/calendar/calendar.limits', () => ({
  ...jest.requireActual<object>('../../src/ranking/options/calendar/calendar.limits'),
  ARCHIVE_ROWS_PER_CALL: 4,
}));

const T0 = 1_700_000_000_000;
const DAY_MS = 86_400_000;
const ITEMS = Array.from({ length: 12 }, (_, n) => `i${n}`);
/** Item n scores 100 - n: i0 the best, no ties. */
const scoreOf = (n: number) => 100 - n;

/**
 * Reads of one kept listing in several calls (issue #45's review): a retraction or a moderation change
 * between two calls of one read must not lose or repeat a row where their pages meet, nor join counts of
 * two states. The change runs between the first call and the next (a gate on RedisFunctions.call): each
 * read answers what one state answers, that after the change (the read begun again), or refuses.
 */
describe('a kept listing read in several calls while it changes (single, one shard)', () => {
  const clock = new FakeClock(T0);
  const world = useRankingGraph('single', clock, {});

  /** A one-shard board keeping day archives of every item, its day closed and archived; the period's start. */
  async function archived(name: string): Promise<number> {
    const windows = [{ name: 'day', calendar: 'day', archive: { keep: 3, top: 20 } }];
    await world.graph.ranking.putBoard({ name, windows });
    await world.graph.ranking.incrementBatch(
      name,
      ITEMS.map((item, n) => ({ item, amount: scoreOf(n) })),
    );
    clock.advanceMs(DAY_MS);
    for (let reads = 1; ; reads++) {
      const answer = world.graph.ranking.archive(name, 'day', undefined, { offset: 0, limit: 1 });
      const read = await answer.then(({ from }) => from).catch((error: DomainError) => error.code);
      if (typeof read === 'number') return read;
      expect(read).toBe('WINDOW_DRAINING');
      expect(reads).toBeLessThan(50);
    }
  }

  /**
   * `read` with `change` run once each `fn` call of it that `first` picks (default: the first) has
   * answered, its other calls of `fn` held till then; how often it ran.
   */
  async function racing<T>(
    fn: unknown,
    read: () => Promise<T>,
    change: () => Promise<void>,
    first: (input: unknown, calls: number) => boolean = (_, calls) => calls === 1,
  ): Promise<{ answer: T; changes: number }> {
    const functions: RedisFunctions = world.graph.module.get(ArchivesStore).functions;
    const call = functions.call.bind(functions);
    let [calls, changes, changing] = [0, 0, Promise.resolve()];
    const spy = jest.spyOn(functions, 'call').mockImplementation(async (called, input) => {
      if (called !== fn) return call(called, input);
      calls += 1;
      if (!first(input, calls)) {
        await changing;
        return call(called, input);
      }
      // Set before this call is sent: the calls sent after it (a Promise.all's) wait for the change.
      let changed!: () => void;
      changing = new Promise((resolve) => (changed = resolve));
      const reply = await call(called, input);
      changes += 1;
      await change();
      changed();
      return reply;
    });
    try {
      return { answer: await read(), changes };
    } finally {
      spy.mockRestore();
    }
  }

  const archiveRead = () => world.graph.module.get(ArchivesStore).fns.archiveRead;
  const page = (name: string) =>
    world.graph.ranking.archive(name, 'day', undefined, { offset: 0, limit: ITEMS.length });
  const hide = (name: string, item: string) =>
    world.graph.module
      .get(ModerationService)
      .setState({ name, item, state: 'hidden' })
      .then(() => undefined);

  async function retract(name: string, item: string): Promise<void> {
    const started = (await world.graph.retractions.start(name, { kind: 'item', id: item })).body;
    await world.graph.retractions.settled(name, started.id);
  }

  it.each([
    ['a retraction', 'seamret', retract],
    ['a moderation change', 'seammod', hide],
  ])('reads a period again when %s moves the rows before the next call', async (_, name, change) => {
    await archived(name);
    // i1 leaves the first call's page: every row after it moves up one.
    const { answer, changes } = await racing(
      archiveRead(),
      () => page(name),
      () => change(name, 'i1'),
    );
    expect(changes).toBe(1);
    const after = await page(name);
    expect(after.items.map(({ item }) => item)).toEqual(ITEMS.filter((item) => item !== 'i1'));
    expect(answer.items).toEqual(after.items);
  });

  it('reads a period again when every row leaves it before the next call', async () => {
    const name = 'seamall';
    await archived(name);
    const { answer, changes } = await racing(
      archiveRead(),
      () => page(name),
      async () => {
        for (const item of ITEMS) await retract(name, item);
      },
    );
    expect(changes).toBe(1);
    expect((await page(name)).items).toEqual([]);
    expect(answer.items).toEqual([]);
  });

  it('answers a 503 WINDOW_DRAINING when the period changes between the calls of every attempt', async () => {
    const name = 'seamevery';
    await archived(name);
    const hidden = ['i0', 'i1', 'i2', 'i3'];
    // Each attempt's first call: an item of its page hidden after it.
    const read = racing(
      archiveRead(),
      () => page(name),
      () => hide(name, hidden.shift()!),
      (input) => (input as { rows: ArchiveRows }).rows.skip === 0,
    );
    await expect(read).rejects.toMatchObject({ code: 'WINDOW_DRAINING', message: /changed while it was read/ });
  });

  it('joins the pieces of a listing_counts ask only when they read one state', async () => {
    const name = 'seamcounts';
    const atSec = await archived(name);
    const board = await world.graph.cache.withBoard(name, (prepared) => Promise.resolve(prepared));
    const store = world.graph.module.get(HistoryStore);
    // Rows between the listing's, each with every row above it counted, in three pieces (askPieces).
    const rows = Array.from({ length: 2 * LISTING_UNITS_PER_CALL }, (_, k) => ({
      item: `r${k}`,
      score: scoreOf(k % ITEMS.length) - 0.5,
    }));
    const of = { store, board, window: board.window('day')!, nowMs: clock.nowMs() };
    const asks = [{ shard: board.shards[0], asked: [{ atSec, items: [], rows, rankItems: false }] }];
    const counts = () => listingCountsOf(of, asks);
    const { answer, changes } = await racing(store.fns.listingCounts, counts, () => retract(name, 'i0'));
    expect(changes).toBe(1);
    const after = await counts();
    expect(after.counts[0][0].ahead.slice(0, ITEMS.length)).toEqual(ITEMS.map((_, n) => n));
    if (!answer.draining) expect(answer).toEqual(after);
  });
});
