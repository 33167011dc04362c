import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';
import { COUNTED_VIEW_ROWS_PER_CALL } from '../../../src/ranking/core/ranking.limits';
import { wilsonLowerBound } from '../../../src/ranking/options/metrics/metric-formulas';

/**
 * A wilson view's page of 1 000 rows is read in calls of at most COUNTED_VIEW_ROWS_PER_CALL rows (issue
 * #45: one call answering 3 000 values held Redis 5.8 ms), and answers what pages of 100 rows answer:
 * every listed item once, in order, at its rank, with the formula's score and both counts. Counted
 * from the FCALLs Redis ran (SLOWLOG at 0 µs).
 */
const T0 = 1_700_010_000_000;
const ITEMS = 1_100;
const PAGE = 1_000;

/** id, time, µs, arguments, client address, client name. */
type SlowlogEntry = [number, number, number, string[], string, string];
type Row = { item: string; rank: number; score: number; metrics?: Record<string, number> };

describe('the calls of a wilson view page (single)', () => {
  const clock = new FakeClock(T0);
  // A server of its own: the test reads every call it ran from its SLOWLOG.
  const own = useOwnServerRanking(clock);

  async function viewCalls(): Promise<number> {
    const entries = (await own().node.slowlog('GET', 100_000)) as SlowlogEntry[];
    return entries.filter(([, , , args, client]) => client !== '?:0' && /_read_view$/.test(String(args[1]))).length;
  }

  it('reads a page of 1 000 rows in calls of at most COUNTED_VIEW_ROWS_PER_CALL rows, as pages of 100 answer it', async () => {
    const views = [{ name: 'best', mode: 'wilson', window: 'w', positive: 'up', negative: 'down' }];
    const windows = [{ name: 'w', period: 3600, interval: 60 }];
    await own().ranking.putBoard({ name: 'rated', windows, metrics: ['up', 'down'], views } as never);
    const up = (n: number) => 1 + (n % 37);
    const down = (n: number) => n % 11;
    for (const [metric, count] of [['up', up] as const, ['down', down] as const])
      for (let first = 0; first < ITEMS; first += 500) {
        const entries = Array.from({ length: 500 }, (_, k) => ({ item: `i${first + k}`, amount: count(first + k) }));
        await own().ranking.incrementBatch(
          'rated',
          entries.filter((entry) => entry.amount > 0).map((entry) => ({ ...entry, metric })),
        );
      }
    // The first read drains and registers the view: not counted.
    await own().ranking.top('rated', 'best', 0, 1);

    await own().node.config('SET', 'slowlog-log-slower-than', '0');
    await own().node.config('SET', 'slowlog-max-len', '100000');
    await own().node.slowlog('RESET');
    const whole = (await own().ranking.top('rated', 'best', 0, PAGE)).items as Row[];
    const calls = await viewCalls();
    await own().node.config('SET', 'slowlog-log-slower-than', '10000');

    const paged: Row[] = [];
    for (let offset = 0; offset < PAGE; offset += 100)
      paged.push(...((await own().ranking.top('rated', 'best', offset, 100)).items as Row[]));
    expect(whole).toEqual(paged);
    expect(new Set(whole.map((row) => row.item)).size).toBe(PAGE);
    for (const row of whole) {
      const n = Number(row.item.slice(1));
      expect(row.metrics).toEqual({ up: up(n), down: down(n) });
      expect(row.score).toBeCloseTo(wilsonLowerBound(up(n), down(n)), 12);
    }
    const scores = whole.map((row) => row.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(calls).toBe(Math.ceil(PAGE / COUNTED_VIEW_ROWS_PER_CALL));
    expect(calls).toBeGreaterThanOrEqual(4);
  }, 120_000);
});
