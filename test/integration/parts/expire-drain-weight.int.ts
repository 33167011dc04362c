import { FakeClock } from '../../../harness/clock';
import { BOARDS } from '../../../harness/worst-case/boards';
import { AppConfig } from '../../../src/common/config';
import { adminStepUnits } from '../../../src/ranking/core/write-cost';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { useIdleExpirer } from '../../support/ranking-graph';
import { drainedFields, type LoggedCall } from '../../support/slowlog';

const T0 = 1_700_000_000_000;
/** Items of each metric: more than one expire call drains from a window. */
const ITEMS = 120;
const IDLE_MS = 14 * 86_400_000;
const MOST_PASSES = 20;
const RATED = BOARDS['wc-rated'];
/** The units an expire call's drains may spend, about a Redis command each (expiry.store.ts). */
const UNITS = adminStepUnits(new AppConfig().WRITE_COST_PER_CALL);
/**
 * What an expire call runs besides its drains: the config, each window's oldest slot, the likes, the
 * due index (about 30 commands on this board), with room to spare: a call runs well within it when
 * its fields are weighed at what they run, and 704 commands when they were weighed 3 units each.
 */
const MOST_COMMANDS = Math.round(UNITS * 1.5);

/** The window results a call's drains took fields from (each a ZINCRBY taking an amount back), by window key stem. */
function drainedWindows({ commands }: LoggedCall): Map<string, number> {
  const fields = new Map<string, number>();
  for (const [name, key, amount] of commands) {
    const stem = /}:([^:]+):top$/.exec(key)?.[1];
    if (name.toLowerCase() === 'zincrby' && stem && Number(amount) < 0) fields.set(stem, (fields.get(stem) ?? 0) + 1);
  }
  return fields;
}

/** The calls that drained the window `stem` ("<window>" of the first metric, "<window>~@<metric>" of another). */
const callsDraining = (calls: LoggedCall[], stem: string) => calls.filter((call) => drainedWindows(call).has(stem));

/** The metric whose windows a logged expire call drains (its keys "<window>~@<metric>:…"; none: the first). */
const metricOf = ({ call }: LoggedCall) =>
  call.map((arg) => /~@([^:]+):/.exec(arg)?.[1]).find(Boolean) ?? RATED.metrics[0];

/**
 * The scheduler's expiry after idle weeks on the worst-case harness's `wc-rated` board (issue #45: 8
 * metrics of 8 windows, ties first, a wilson or controversial view of each window against two
 * metrics): a drained field of a window such a view reads runs ~14 commands (its score, ties' order
 * and mark, item data's check, the view's two counts read and its score removed), and the drain
 * weighed it 3 units (2 and 1 a view): an expire call of 144 units ran 704 commands. Each field
 * weighs what the options of its own window run for it (actor_lib's drained_weight), so an expire
 * call runs about its units, a window no view reads drains in fewer, fuller calls than one a view
 * reads (weighed as the board's costliest window, both took as many calls), a metric drained is not
 * called again in the visit, and the passes still drain the board to the end.
 */
describe('the expire calls of a board of rated views after idle weeks (single)', () => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  const { expirer, expirePasses } = useIdleExpirer(clock, IDLE_MS, async (graph) => {
    const { ranking } = graph;
    await ranking.putBoard({
      name: 'rated',
      ...RATED,
      windows: [...RATED.windows],
      views: [...RATED.views],
      metrics: [...RATED.metrics],
    });
    for (const metric of RATED.metrics) {
      const entries = Array.from({ length: ITEMS }, (_, n) => ({ item: `i${n}`, amount: ITEMS - n, metric }));
      await ranking.incrementBatch(commands.batch({ board: 'rated', entries }));
    }
  });

  it('runs no expire call past about its units, each window weighed by its own views, and the passes drain the board to the end', async () => {
    const { calls, passes } = await expirePasses(MOST_PASSES);
    expect(passes).toBeLessThan(MOST_PASSES);
    expect(Math.max(...calls.map(drainedFields))).toBeGreaterThan(0);
    // Before: 704 commands in a call draining 48 fields of a window a wilson view reads; now 164.
    expect(Math.max(...calls.map(({ commands }) => commands.length))).toBeLessThanOrEqual(MOST_COMMANDS);
    // The second metric's `m` no view reads, its `h` a wilson view does (rated2): both hold ITEMS
    // fields. Weighed as the board's costliest window, each took 14 calls; now 6 and 14.
    const [, second] = RATED.metrics;
    expect(callsDraining(calls, `m~@${second}`).length).toBeLessThan(callsDraining(calls, `h~@${second}`).length / 2);
    // The third metric's only window a view reads (`d`, rated3) keeps its items: its calls end with its
    // cheap windows' drains, the last metric's (every window read) go on. Before: 68 calls each.
    const callsOf = (metric: string) => calls.filter((call) => metricOf(call) === metric).length;
    expect(callsOf(RATED.metrics[2])).toBeLessThan(callsOf(RATED.metrics[7]) / 2);
    const { ranking } = expirer();
    for (const metric of RATED.metrics)
      expect((await ranking.top('rated', 'hour', 0, 10, { metric })).items).toEqual([]);
    for (const view of RATED.views) {
      const expected = ['d', 'mo', 'q'].includes(view.window) ? ITEMS : 0;
      expect((await ranking.top('rated', view.name, 0, 1000)).items).toHaveLength(expected);
    }
    expect((await ranking.top('rated', 'd', 0, 1000)).items).toHaveLength(ITEMS);
  }, 300_000);
});
