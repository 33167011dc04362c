/**
 * The worst-case harness's filtered reads of its 64-shard groups boards at a full-size shard, in Redis
 * instructions a call (issue #45): `npm run bench -- --part group-scan-instructions`, a few minutes.
 * harness/worst-case/boards.ts' wc-groups, wc-tb-groups and wc-tf-groups on one shard of
 * GROUP_BENCH_SHARD_ITEMS items (full size: 100 000 over 64 shards, 1 560), seeded as
 * harness/worst-case/seed.ts seeds them (the head in one group, the last 100 items in a group each), so the
 * shard's scan is a full-size shard's: `perGroup 1, limit 1 000` reaches every row, calls of groupScan().scan
 * rows. One shard by default: with GROUP_BENCH_SHARDS above 1 the read hung under perFcall (which sends each
 * FCALL once the last answered; the shards' calls go out together). One shard's strict board marks its rows by
 * place, not by ties_lib's marks.
 * Seeded with callgrind's counting off; prints each read's calls and instructions (GROUP_BENCH_CALLS=1: each call's).
 */
import type { FakeClock } from '../harness/clock';
import type { RankingGraph } from '../harness/compose-ranking';
import { BOARDS } from '../harness/worst-case/boards';
import { FiltersService } from '../src/ranking/filters/filters.service';
import { WriteCommands } from '../src/ranking/writes/write-commands';
import { perFcall, withCallgrindRanking } from './callgrind-ranking';
import { counting } from './redis-instructions';

const SHARDS = Number(process.env.GROUP_BENCH_SHARDS ?? 1);
const ITEMS = SHARDS * Number(process.env.GROUP_BENCH_SHARD_ITEMS ?? 1560);
const BATCH = 500;
const EXCLUDED = {
  excludeItems: Array.from({ length: 1000 }, (_, n) => `i${n}`),
  excludeGroups: Array.from({ length: 100 }, (_, n) => `g${n + 1}`),
};
const group = (n: number) => (n < ITEMS - 100 ? 'g0' : `g${ITEMS - n}`);
/** Each board's entries as the harness seeds it. */
const SEEDED = {
  'wc-groups': (n: number) => ({ item: `i${n}`, amount: ITEMS - n, group: group(n) }),
  'wc-tb-groups': (n: number) => ({ item: `i${n}`, score: 7, tiebreak: n, group: group(n) }),
  'wc-tf-groups': (n: number) => ({ item: `i${n}`, amount: 7, group: group(n) }),
};
const READS = [
  { label: 'wc-groups: perGroup 1, limit 1 000', board: 'wc-groups' },
  { label: 'wc-tb-groups: the same (pair order)', board: 'wc-tb-groups' },
  { label: 'wc-tf-groups: the same (strict order)', board: 'wc-tf-groups' },
  { label: 'wc-tf-groups: with 1 000 items and 100 groups excluded', board: 'wc-tf-groups', ...EXCLUDED },
];
const millions = (ir: number) => (ir / 1e6).toFixed(2);

async function seed(graph: RankingGraph, clock: FakeClock): Promise<void> {
  const commands = new WriteCommands(clock);
  for (const [name, entry] of Object.entries(SEEDED)) {
    const config = BOARDS[name as keyof typeof BOARDS] as object;
    await graph.ranking.putBoard({ name, ...config, shards: SHARDS } as Parameters<
      RankingGraph['ranking']['putBoard']
    >[0]);
    for (let first = 0; first < ITEMS; first += BATCH) {
      const entries = Array.from({ length: Math.min(BATCH, ITEMS - first) }, (_, k) => entry(first + k));
      await graph.ranking.incrementBatch(commands.batch({ board: name, entries }));
    }
  }
}

export async function groupScanInstructionsBench(): Promise<void> {
  await withCallgrindRanking(
    1_700_000_040_000,
    async ({ server, graph, clock }) => {
      await seed(graph, clock);
      counting(server, true);
      const filters = graph.module.get(FiltersService);
      console.log(
        `| read (${SHARDS} shards of ${ITEMS / SHARDS} items) | calls | M instructions | costliest call (M) | rows |`,
      );
      console.log('| --- | ---: | ---: | ---: | ---: |');
      for (const { label, ...read } of READS) {
        let rows = 0;
        const counted = await perFcall(server, async () => {
          const page = await filters.read({ window: 'm', offset: 0, limit: 1000, perGroup: 1, ...read });
          rows = page.items.length;
        });
        const own = counted.map((call) => call.own);
        const total = own.reduce((sum, n) => sum + n, 0);
        console.log(`| ${label} | ${own.length} | ${millions(total)} | ${millions(Math.max(...own))} | ${rows} |`);
        if (process.env.GROUP_BENCH_CALLS) console.log(`calls (M): ${own.map(millions).join(' ')}`);
      }
    },
    { WRITE_COST_PER_CALL: '1000000' },
    ['--instr-atstart=no'],
  );
}
