/**
 * A filtered span read of a tail board, in Redis instructions (issue #45): `npm run bench -- --part
 * tail-span-instructions`, a few minutes. redis-server runs under callgrind (startCallgrindRedis), which
 * counts what it executes whatever else the machine does. A one-shard board of `tail: { exact: 1,
 * below: 2 }` whose closed minute slot holds SPAN_MAX_FIELDS - 1 items counting 2 (every one kept by the
 * pruning, then packed: tail_pack_lib), the driver item in the open slot: a span of the whole window
 * holds the SPAN_MAX_FIELDS fields one read takes, all but one as packed records. Prints the read's calls
 * (the span's staging calls, its scans, the drop) and their instructions.
 */
import type Redis from 'ioredis';
import { FiltersService } from '../src/ranking/filters/filters.service';
import { SPAN_MAX_FIELDS } from '../src/ranking/core/ranking.limits';
import { WriteCommands } from '../src/ranking/writes/write-commands';
import type { RankingGraph } from '../harness/compose-ranking';
import { CountedFcall, perFcall, withCallgrindRanking } from './callgrind-ranking';

const PACKED = SPAN_MAX_FIELDS - 1;
const BATCH = 500;
/** Calls driving the pruning and packing (each within EXPIRE_CHUNK fields) at most. */
const MOST_DRIVING_CALLS = 400;

const millions = (ir: number) => (ir / 1e6).toFixed(2);

/** Packed records the board's window holds (tail_pack_lib's p:<start> fields of "<base>tailpack"). */
async function packedRecords(redis: Redis): Promise<number> {
  const [state] = await redis.keys('*board:tp*tailpack');
  if (!state) return 0;
  const held = await redis.hgetall(state);
  return Object.entries(held).reduce((sum, [field, n]) => (field.startsWith('p:') ? sum + Number(n) : sum), 0);
}

/** Writes of the driver item in the open slot until every seeded item is packed. */
async function packAll(graph: RankingGraph, commands: WriteCommands, redis: Redis): Promise<number> {
  const drive = commands.batch({ board: 'tp', entries: [{ item: 'driver', amount: 1 }] });
  for (let call = 0; call < MOST_DRIVING_CALLS; call++) {
    if ((await packedRecords(redis)) >= PACKED) return call;
    await graph.ranking.incrementBatch(drive);
  }
  throw new Error(`the closed slot was not packed after ${MOST_DRIVING_CALLS} calls`);
}

function callFigures(counted: CountedFcall[]): string {
  const stage = counted.filter((call) => call.name.endsWith('span_stage'));
  const total = counted.reduce((sum, call) => sum + call.ir, 0);
  const own = counted.map((call) => `${call.name.replace(/^tb_[a-z]+_[0-9a-f]+_/, '')} ${millions(call.own)}`);
  const most = Math.max(0, ...counted.map((call) => call.own));
  return `| ${counted.length} (${stage.length} span_stage) | ${millions(total)} | ${millions(most)} | ${own.join(', ')} |`;
}

export async function tailSpanInstructionsBench(): Promise<void> {
  await withCallgrindRanking(1_700_000_040_000, async ({ server, redis, graph, clock }) => {
    const commands = new WriteCommands(clock);
    const windows = [{ name: 'm', period: '1h', interval: '1m' }];
    await graph.ranking.putBoard({ name: 'tp', windows, tail: { exact: 1, below: 2 } });
    for (let first = 0; first < PACKED; first += BATCH) {
      const count = Math.min(BATCH, PACKED - first);
      const entries = Array.from({ length: count }, (_, k) => ({ item: `i${first + k}`, amount: 2 }));
      await graph.ranking.incrementBatch(commands.batch({ board: 'tp', entries }));
    }
    clock.advanceMs(60_000);
    const driving = await packAll(graph, commands, redis);
    console.log(`${await packedRecords(redis)} packed records after ${driving} driving calls`);
    const filters = graph.module.get(FiltersService);
    console.log('| calls | M instructions | costliest call, its own (M) | each call, its own (M) |');
    const counted = await perFcall(server, () =>
      filters.read({ board: 'tp', window: 'm', span: '60m', offset: 0, limit: 1000, excludeItems: ['i0'] }),
    );
    console.log(callFigures(counted));
  });
}
