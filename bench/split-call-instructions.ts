/**
 * Two reads and writes the worst-case harness found over 5 ms a call (issue #45), counted in Redis
 * instructions call by call (fanout-call-instructions.ts's way: each function call sent alone, the
 * counters dumped after each): `npm run bench -- --part split-call-instructions`, a few
 * minutes. A `top` of 1 000 rows of one shard, each with 1 KB of data; a batch of 1 000 items new to
 * the harness's 64-shard leagues board (wc-leagues64) filled with two full cohorts of its lowest tier.
 * SPLIT_BENCH_ONLY=<regular expression> measures the rows whose label holds it.
 */
import { type RankingGraph } from '../harness/compose-ranking';
import { BOARDS } from '../harness/worst-case/boards';
import { ItemDataService } from '../src/ranking/items/items.service';
import { BATCH_ENTRIES } from '../src/ranking/core/ranking.limits';
import { type CallLog, measure, serializeCalls } from './fanout-call-instructions';
import { type CallgrindRanking, withCallgrindRanking } from './callgrind-ranking';

const ROWS = 1000;
/** Within the cost bound on one shard of a `ties: first` board (1 800 / 5 units). */
const SEED_BATCH = 360;
const LEAGUE_MEMBERS = 2000;
/** The most entries of one call a leagues board's batch takes within WRITE_COST_PER_CALL (1 800 / 5 units). */
const ONE_SHARD_BATCH = 360;
type BoardBody = Parameters<RankingGraph['ranking']['putBoard']>[0];

async function fill(graph: RankingGraph, board: string, count: number, item: (n: number) => string): Promise<void> {
  for (let first = 0; first < count; first += SEED_BATCH) {
    const entries = Array.from({ length: Math.min(SEED_BATCH, count - first) }, (_, k) => ({
      item: item(first + k),
      amount: count - first - k,
    }));
    await graph.ranking.incrementBatch(board, entries);
  }
}

/** One shard, one window, ROWS items each with 1 KB of data: what the harness's data row reads. */
async function seedData(graph: RankingGraph, data: ItemDataService): Promise<void> {
  await graph.ranking.putBoard({ name: 'data', windows: [{ name: 'm', period: 3600, interval: 60 }] } as BoardBody);
  await fill(graph, 'data', ROWS, (n) => `i${n}`);
  for (let n = 0; n < ROWS; n++) await data.write({ name: 'data', item: `i${n}`, data: { blob: 'x'.repeat(1012) } });
}

let batches = 0;
const newcomers = () => {
  batches++;
  return Array.from({ length: BATCH_ENTRIES.max }, (_, k) => ({ item: `n${batches}-${k}`, amount: k + 1 }));
};

/** A case's tools: the graph over the callgrind server, the calls' log and the fake clock. */
type Split = Pick<CallgrindRanking, 'graph' | 'clock'> & { log: CallLog };

/** Batches of new items on a 64-shard board with leagues: the largest, and one of 64. */
async function leaguesBatches({ graph, log, clock }: Split): Promise<void> {
  await graph.ranking.putBoard({ name: 'wc-leagues64', ...BOARDS['wc-leagues64'] } as BoardBody);
  await fill(graph, 'wc-leagues64', LEAGUE_MEMBERS, (n) => `l${n}`);
  const batch = () => graph.ranking.incrementBatch('wc-leagues64', newcomers());
  await measure(log, `leagues batch of ${BATCH_ENTRIES.max} new items (64 shards)`, batch, clock);
  const few = () => graph.ranking.incrementBatch('wc-leagues64', newcomers().slice(0, 64));
  await measure(log, 'leagues batch of 64 new items (64 shards)', few, clock);
}

/** A batch of new items on one shard, with leagues and without. */
async function oneShardBatches({ graph, log, clock }: Split): Promise<void> {
  for (const [name, board] of [
    ['lg1', BOARDS['wc-leagues']],
    ['plain1', { ...BOARDS['wc-leagues'], leagues: undefined }],
  ] as const) {
    await graph.ranking.putBoard({ name, ...board } as BoardBody);
    await fill(graph, name, LEAGUE_MEMBERS, (n) => `l${n}`);
    const batch = () => graph.ranking.incrementBatch(name, newcomers().slice(0, ONE_SHARD_BATCH));
    await measure(log, `one-shard batch of ${ONE_SHARD_BATCH} new items on ${name}`, batch, clock);
  }
}

/** The largest batch of new items on the 64-shard board without leagues. */
async function plainBatch({ graph, log, clock }: Split): Promise<void> {
  const { leagues: _, ...plain } = BOARDS['wc-leagues64'];
  await graph.ranking.putBoard({ name: 'plain64', ...plain } as BoardBody);
  await fill(graph, 'plain64', LEAGUE_MEMBERS, (n) => `l${n}`);
  const batch = () => graph.ranking.incrementBatch('plain64', newcomers());
  await measure(log, `plain batch of ${BATCH_ENTRIES.max} new items (the same board without leagues)`, batch, clock);
}

export async function splitCallInstructionsBench(): Promise<void> {
  const only = new RegExp(process.env.SPLIT_BENCH_ONLY ?? '');
  await withCallgrindRanking(1_699_999_980_000, async ({ server, graph, clock }) => {
    const data = graph.module.get(ItemDataService);
    const log: CallLog = { measuring: false, calls: [] };
    serializeCalls(server, log);
    console.log('| request | calls | M instructions | longest call, M |');
    console.log('| --- | ---: | ---: | ---: |');
    if (only.test('top data')) {
      await seedData(graph, data);
      const top = async () => data.attach('data', (await graph.ranking.top('data', 'm', 0, ROWS)).items, true);
      await measure(log, `top ${ROWS} rows, 1 KB of data each (one shard)`, top, clock);
    }
    if (only.test('leagues batch')) await leaguesBatches({ graph, log, clock });
    if (only.test('one-shard batch')) await oneShardBatches({ graph, log, clock });
    if (only.test('plain batch')) await plainBatch({ graph, log, clock });
  });
}
