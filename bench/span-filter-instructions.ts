/**
 * A filtered read with minActors over a span, a window or a view, in Redis instructions (issues #49, #45):
 * `npm run bench -- --part span-filter-instructions`, a few minutes. redis-server runs
 * under callgrind (startCallgrindRedis), which counts what it executes whatever else the machine does.
 * The harness's wc-spanactors board (span-filter-rows.ts): 2 001 items over the 60 minute slots of a
 * one-hour window, the first 1 999 each with an actor, so a span of the whole window holds the 4 000 slot
 * fields and contributions one read takes. Prints, per read (the same filters with and without
 * minActors, over the span, over the window and over a decay view of the same items on a board of its
 * own), its calls (a span's staging calls, group_page or read_view scans, the drop) and their
 * instructions (SPAN_BENCH_CALLS=1: each call's too; SPAN_BENCH_KEEP=1: the costliest call's callgrind dump); and wc-spangroups' read for
 * comparison (the bound's span of one slot without actors).
 */
import { FiltersService } from '../src/ranking/filters/filters.service';
import { MIN_ACTORS, SPAN_MAX_FIELDS } from '../src/ranking/core/ranking.limits';
import { WriteCommands } from '../src/ranking/writes/write-commands';
import type { FakeClock } from '../harness/clock';
import type { RankingGraph } from '../harness/compose-ranking';
import { CountedFcall, perFcall, withCallgrindRanking } from './callgrind-ranking';

const ITEMS = 2001;
const BATCH = 200;
/** A batch the board with a view takes (its view's work counted against the write bound). */
const VIEW_BATCH = 50;
const WINDOWS = [{ name: 'm', period: '1h', interval: '1m' }];
const VIEWS = [{ name: 'fading', mode: 'decay', window: 'm', halfLife: '30m' }];
const EXCLUDED = {
  excludeItems: Array.from({ length: 1000 }, (_, n) => `i${n}`),
  excludeGroups: Array.from({ length: 100 }, (_, n) => `g${n + 1}`),
};
const READS = [
  { label: 'span 60m, perGroup 1, exclusions', board: 'sa', span: '60m' },
  { label: `the same with minActors ${MIN_ACTORS.max}`, board: 'sa', span: '60m', minActors: MIN_ACTORS.max },
  { label: 'the window, perGroup 1, exclusions', board: 'sa' },
  { label: `the same with minActors ${MIN_ACTORS.max}`, board: 'sa', minActors: MIN_ACTORS.max },
  { label: 'the decay view (sv), perGroup 1, exclusions', board: 'sv', window: 'fading' },
  { label: `the same on a decay view (sv)`, board: 'sv', window: 'fading', minActors: MIN_ACTORS.max },
  { label: `wc-spangroups' span read: ${SPAN_MAX_FIELDS} items in one slot, no actors`, board: 'sg', span: '60m' },
];

/** wc-spangroups' items (seed.ts): SPAN_MAX_FIELDS in the current slot, the head in one group. */
function spanGroupsEntries(first: number, count: number) {
  return Array.from({ length: count }, (_, k) => {
    const n = first + k;
    return {
      item: `i${n}`,
      amount: SPAN_MAX_FIELDS - n,
      group: n < SPAN_MAX_FIELDS - 100 ? 'g0' : `g${SPAN_MAX_FIELDS - n}`,
    };
  });
}

const millions = (ir: number) => (ir / 1e6).toFixed(2);

/** A read's calls by kind (a span's staging calls, its scans, its drop), total and costliest instructions. */
function callFigures(counted: CountedFcall[]): string {
  const stage = counted.filter((call) => call.name.endsWith('span_stage'));
  const scan = counted.filter((call) => /(group_page|read_view)$/.test(call.name));
  const most = (calls: CountedFcall[]) => Math.max(0, ...calls.map((call) => call.ir));
  const total = counted.reduce((sum, call) => sum + call.ir, 0);
  // The last staging call of each shard drops the staged keys (the bench's boards have one shard).
  const kinds = stage.length === 0 ? `${scan.length}` : `${counted.length} (${stage.length - 1}, ${scan.length}, 1)`;
  return `${kinds} | ${millions(total)} | ${millions(most(counted))} | ${millions(most(stage))} / ${millions(most(scan))}`;
}

/** sa's items: spread over the hour's minutes, the head in one group, the first ones with an actor each. */
function spanActorsEntries(first: number, count: number, nowSec: number) {
  return Array.from({ length: count }, (_, k) => {
    const n = first + k;
    const group = n < ITEMS - 100 ? 'g0' : `g${ITEMS - n}`;
    const actor = n < SPAN_MAX_FIELDS - ITEMS ? { actor: `a${n}` } : {};
    return { item: `i${n}`, amount: ITEMS - n, at: nowSec - (n % 60) * 60, group, ...actor };
  });
}

/** Seeds sa (and sv: the same items, with a decay view) and sg over `graph`, at the clock's time. */
async function seedBoards({ graph, clock }: { graph: RankingGraph; clock: FakeClock }): Promise<void> {
  const commands = new WriteCommands(clock);
  const nowSec = Math.floor(clock.nowMs() / 1000);
  const boards = [
    { name: 'sa', batch: BATCH },
    { name: 'sv', batch: VIEW_BATCH, views: VIEWS },
  ];
  for (const { name, batch, views } of boards) {
    await graph.ranking.putBoard({ name, windows: WINDOWS, ...(views ? { views } : {}), groups: true, actors: true });
    for (let first = 0; first < ITEMS; first += batch) {
      const entries = spanActorsEntries(first, Math.min(batch, ITEMS - first), nowSec);
      await graph.ranking.incrementBatch(commands.batch({ board: name, entries }));
    }
  }
  await graph.ranking.putBoard({ name: 'sg', windows: WINDOWS, groups: true });
  for (let first = 0; first < SPAN_MAX_FIELDS; first += 1000)
    await graph.ranking.incrementBatch(commands.batch({ board: 'sg', entries: spanGroupsEntries(first, 1000) }));
}

export async function spanFilterInstructionsBench(): Promise<void> {
  await withCallgrindRanking(1_700_000_040_000, async ({ server, graph, clock }) => {
    await seedBoards({ graph, clock });
    const filters = graph.module.get(FiltersService);
    console.log(
      '| read | calls (stage, scan, drop) | M instructions | costliest call (M) | costliest stage / scan call (M) | rows |',
    );
    for (const read of READS) {
      let rows = 0;
      const counted = await perFcall(server, async () => {
        const page = await filters.read({
          window: 'm',
          offset: 0,
          limit: 1000,
          perGroup: 1,
          ...EXCLUDED,
          ...read,
        });
        rows = page.items.length;
      });
      console.log(`| ${read.label} | ${callFigures(counted)} | ${rows} |`);
      if (process.env.SPAN_BENCH_CALLS) console.log(`calls (M): ${counted.map((call) => millions(call.ir)).join(' ')}`);
      if (process.env.SPAN_BENCH_KEEP) console.log(`costliest: ${[...counted].sort((x, y) => y.ir - x.ir)[0]?.file}`);
    }
  });
}
