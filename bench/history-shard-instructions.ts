/**
 * The history reads of a sharded board at the worst-case harness's full-size shape, counted in Redis
 * instructions call by call (issue #45): `npm run bench -- --part history-shard-instructions`, a few
 * minutes. redis-server runs under callgrind (startCallgrindRedis), which counts the instructions it
 * executes whatever else the machine does. At full size each shard of wc-shards holds about 1 560 items
 * and keeps snapshots of 1 000 rows (its `m` window: keep 1000, top 1000); the per-shard work of its
 * history reads is reproduced on HISTORY_BENCH_SHARDS shards (2) of HISTORY_BENCH_ITEMS_PER_SHARD items
 * (1 560) each, SNAPSHOTS boundaries crossed and MODERATED_ITEMS_PER_SHARD items hidden. Per request:
 * every call's function and own instructions (serverCron's left out).
 */
import { type RankingGraph } from '../harness/compose-ranking';
import { type FakeClock } from '../harness/clock';
import { MODERATED_ITEMS_PER_SHARD } from '../src/ranking/core/ranking.limits';
import { ModerationService } from '../src/ranking/moderation/moderation.service';
import { perFcall, withCallgrindRanking } from './callgrind-ranking';
import { type Callgrind } from './redis-instructions';

const SHARDS = Number(process.env.HISTORY_BENCH_SHARDS ?? 2);
const ITEMS = SHARDS * Number(process.env.HISTORY_BENCH_ITEMS_PER_SHARD ?? 1560);
const SNAPSHOTS = 6;
const MINUTE_MS = 60_000;
const BOARD = 'hist';
const BATCH = 500;
const WINDOWS = [{ name: 'm', period: 10_000 * 60, interval: 60, snapshots: { keep: 1000, top: 1000 } }];

/** Millions of instructions, two decimals. */
const millions = (instructions: number) => (instructions / 1e6).toFixed(2);

/** Every item written once a boundary, its amount moved by the round (rows change place between snapshots). */
async function seed(graph: RankingGraph, clock: FakeClock): Promise<void> {
  await graph.ranking.putBoard({ name: BOARD, windows: WINDOWS, ties: 'first', shards: SHARDS } as never);
  for (let round = 0; round < SNAPSHOTS; round++) {
    const entries = Array.from({ length: ITEMS }, (_, n) => ({
      item: `i${n}`,
      amount: ITEMS - ((n * (round + 3)) % ITEMS),
    }));
    while (entries.length > 0) await graph.ranking.incrementBatch(BOARD, entries.splice(0, BATCH));
    clock.advanceMs(MINUTE_MS);
    await graph.ranking.top(BOARD, 'm', 0, 1);
  }
  const moderation = graph.module.get(ModerationService);
  const step = Math.floor(ITEMS / MODERATED_ITEMS_PER_SHARD);
  for (let n = 0; n < MODERATED_ITEMS_PER_SHARD; n++)
    await moderation.setState({ name: BOARD, item: `i${n * step + 1}`, state: 'hidden' });
}

/** Runs `read` with every FCALL counted and prints its calls (the function's name less the library's prefix). */
async function measure(server: Callgrind, label: string, read: () => Promise<unknown>): Promise<void> {
  const calls = await perFcall(server, read);
  const own = calls.reduce((sum, call) => sum + call.own, 0);
  const longest = calls.reduce((max, call) => (call.own > max.own ? call : max));
  const name = (call: { name: string }) => call.name.replace(/^tb_ranking_[0-9a-f]+_/, '');
  console.log(`| ${label} | ${calls.length} | ${millions(own)} | ${millions(longest.own)} (${name(longest)}) |`);
  console.log(calls.map((call) => `${name(call)} ${millions(call.own)}`).join('; '));
  if (process.env.HISTORY_BENCH_KEEP === '1') console.log(calls.map((call) => `${name(call)} ${call.file}`).join('; '));
}

export async function historyShardInstructionsBench(): Promise<void> {
  await withCallgrindRanking(
    1_699_999_980_000,
    async ({ server, graph, clock }) => {
      await seed(graph, clock);
      const history = () => graph.ranking.itemHistory(BOARD, 'm', 'i5', undefined, undefined);
      console.log(
        `| request (${SHARDS} shards of ${ITEMS / SHARDS} items) | calls | M instructions | longest call, M |`,
      );
      console.log('| --- | ---: | ---: | ---: |');
      await measure(server, 'top 1000, previous ranks read afresh', () => graph.ranking.top(BOARD, 'm', 0, 1000));
      await graph.ranking.top(BOARD, 'm', 0, 1);
      await measure(server, 'history of an item, every shard crossed', history);
      clock.advanceMs(MINUTE_MS);
      await measure(server, 'top 1000, the first read after a boundary', () => graph.ranking.top(BOARD, 'm', 0, 1000));
      clock.advanceMs(MINUTE_MS);
      await measure(server, 'history of an item, a boundary to cross', history);
    },
    { WRITE_COST_PER_CALL: '1000000', REDIS_AUTO_PIPELINING: 'false' },
  );
}
