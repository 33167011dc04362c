/**
 * A filtered read over a span with minActors, in Redis instructions (issue #49):
 * `npm run bench -- --part span-filter-instructions`, a few minutes. redis-server runs
 * under callgrind (startCallgrindRedis), which counts what it executes whatever else the machine does.
 * The harness's wc-spanactors board (span-filter-rows.ts): 2 001 items over the 60 minute slots of a
 * one-hour window, the first 1 999 each with an actor, so a span of the whole window holds the 4 000 slot
 * fields and contributions one read takes. Prints, per read (the same filters with and without
 * minActors, over the span and over the window), its group_page calls and their instructions; and
 * wc-spangroups' read for comparison (the bound's span of one slot without actors).
 */
import { FiltersService } from '../src/ranking/filters/filters.service';
import { FiltersStore } from '../src/ranking/filters/filters.store';
import { MIN_ACTORS, SPAN_MAX_FIELDS } from '../src/ranking/core/ranking.limits';
import { WriteCommands } from '../src/ranking/writes/write-commands';
import { perCall, withCallgrindRanking } from './callgrind-ranking';

const ITEMS = 2001;
const BATCH = 200;
const EXCLUDED = {
  excludeItems: Array.from({ length: 1000 }, (_, n) => `i${n}`),
  excludeGroups: Array.from({ length: 100 }, (_, n) => `g${n + 1}`),
};
const READS = [
  { label: 'span 60m, perGroup 1, exclusions', board: 'sa', span: '60m' },
  { label: `the same with minActors ${MIN_ACTORS.max}`, board: 'sa', span: '60m', minActors: MIN_ACTORS.max },
  { label: `the window, minActors ${MIN_ACTORS.max}`, board: 'sa', minActors: MIN_ACTORS.max },
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

/** sa's items: spread over the hour's minutes, the head in one group, the first ones with an actor each. */
function spanActorsEntries(first: number, count: number, nowSec: number) {
  return Array.from({ length: count }, (_, k) => {
    const n = first + k;
    const group = n < ITEMS - 100 ? 'g0' : `g${ITEMS - n}`;
    const actor = n < SPAN_MAX_FIELDS - ITEMS ? { actor: `a${n}` } : {};
    return { item: `i${n}`, amount: ITEMS - n, at: nowSec - (n % 60) * 60, group, ...actor };
  });
}

export async function spanFilterInstructionsBench(): Promise<void> {
  await withCallgrindRanking(1_700_000_040_000, async ({ server, graph, clock }) => {
    const commands = new WriteCommands(clock);
    const windows = [{ name: 'm', period: '1h', interval: '1m' }];
    await graph.ranking.putBoard({ name: 'sa', windows, groups: true, actors: true });
    const nowSec = Math.floor(clock.nowMs() / 1000);
    for (let first = 0; first < ITEMS; first += BATCH) {
      const entries = spanActorsEntries(first, Math.min(BATCH, ITEMS - first), nowSec);
      await graph.ranking.incrementBatch(commands.batch({ board: 'sa', entries }));
    }
    await graph.ranking.putBoard({ name: 'sg', windows, groups: true });
    for (let first = 0; first < SPAN_MAX_FIELDS; first += 1000)
      await graph.ranking.incrementBatch(commands.batch({ board: 'sg', entries: spanGroupsEntries(first, 1000) }));
    const filters = graph.module.get(FiltersService);
    const store = graph.module.get(FiltersStore);
    console.log('| read | calls | M instructions | costliest call (M) | rows |');
    for (const read of READS) {
      let rows = 0;
      const counted = await perCall(server, store.functions, async () => {
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
      const total = counted.reduce((sum, n) => sum + n, 0);
      console.log(
        `| ${read.label} | ${counted.length} | ${(total / 1e6).toFixed(2)} | ${(Math.max(...counted) / 1e6).toFixed(2)} | ${rows} |`,
      );
    }
  });
}
