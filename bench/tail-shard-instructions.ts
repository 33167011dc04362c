/**
 * One shard of the worst-case harness's 64-shard tail board at full size, in Redis instructions a call
 * (issue #45): `npm run bench -- --part tail-shard-instructions`, about a minute. The shard holds
 * TAIL_ITEMS items (full: 100 000 over 64 shards, 1 560), each seen in every minute of the hour (1 to 3
 * a minute), so each of the window's closed slots is pruned of all but the best 1 000 (`tail: { exact:
 * 1000, below: 1000 }`, harness/worst-case/boards.ts); the read is the harness's deepest page (offset
 * 1 000, limit 1 000: 2 064 rows a shard with the lookahead), read twice (a row past its bound is measured
 * again; the second read finds the first's rows cached). Seeded with callgrind's counting off
 * (`--instr-atstart=no`) by a graph of large budgets; prints each read's calls and their instructions
 * (each FCALL's own), and with TAIL_COMMANDS=1 the costliest call's commands.
 */
import { composeRanking, type RankingGraph } from '../harness/compose-ranking';
import type { FakeClock } from '../harness/clock';
import { validateConfig } from '../src/common/config';
import { StandingStore } from '../src/ranking/standing/standing.store';
import { WriteCommands } from '../src/ranking/writes/write-commands';
import { RedisFunctions } from '../src/redis/redis-functions';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { perFcall, withCallgrindRanking } from './callgrind-ranking';
import { counting, scriptCommandsOf, type Callgrind } from './redis-instructions';

const ITEMS = Number(process.env.TAIL_ITEMS ?? 1560);
/** Minutes seeded: the hour's slots, each closed and pruned by the next. */
const MINUTES = Number(process.env.TAIL_MINUTES ?? 61);
const PAGE_ROWS = 2064;
const BATCH = 500;

/** The board seeded through a graph of its own (budgets past the service's), shut once done. */
async function seed(url: string, clock: FakeClock): Promise<void> {
  const commands = new WriteCommands(clock);
  const config = {
    ...validateConfig({ REDIS_URL: url, WRITE_COST_PER_CALL: '1000000', EXPIRE_CHUNK: '5000' }),
    REDIS_COMMAND_TIMEOUT_MS: 600_000,
  };
  const service = new RedisService(RedisSettings.from(config), clock);
  await service.waitUntilReady(60_000);
  const seeder = await composeRanking(service, new RedisFunctions(service), config, clock);
  await seeder.ranking.putBoard({
    name: 't',
    windows: [{ name: 'h', period: '1h', interval: '1m' }],
    tail: { exact: 1000, below: 1000 },
  });
  for (let minute = 0; minute < MINUTES; minute++) {
    clock.advanceMs(60_000);
    for (let first = 0; first < ITEMS; first += BATCH) {
      const entries = Array.from({ length: Math.min(BATCH, ITEMS - first) }, (_, k) => ({
        item: `i${first + k}`,
        amount: 1 + ((first + k) % 3),
      }));
      await seeder.ranking.incrementBatch(commands.batch({ board: 't', entries }));
    }
  }
  clock.advanceMs(60_000);
  // The last closed minute pruned too: every closed slot is, as the harness's drained board.
  const board = await seeder.cache.get('t');
  await seeder.module.get(StandingStore).tailTop({ board, window: board.config.windows[0], nowMs: clock.nowMs() }, 1);
  await service.onApplicationShutdown();
}

/** One read of the page, its calls counted; prints them. */
async function measuredRead(server: Callgrind, graph: RankingGraph, clock: FakeClock, pass: string): Promise<void> {
  const board = await graph.cache.get('t');
  const store = graph.module.get(StandingStore);
  let rows = 0;
  const fcalls = await perFcall(server, async () => {
    const [reply] = await store.tailTop({ board, window: board.config.windows[0], nowMs: clock.nowMs() }, PAGE_ROWS);
    rows = reply.rows.length;
  });
  const counted = fcalls.map((call) => call.own);
  const total = counted.reduce((sum, n) => sum + n, 0);
  const costliest = fcalls[counted.indexOf(Math.max(...counted))];
  console.log(
    `${pass}: ${counted.length} calls, ${rows} rows, ${(total / 1e6).toFixed(1)} M in all, costliest ` +
      `${(Math.max(...counted) / 1e6).toFixed(2)} M; calls (M): ${counted.map((n) => (n / 1e6).toFixed(2)).join(', ')}`,
  );
  if (process.env.TAIL_COMMANDS === '1') console.log(JSON.stringify(scriptCommandsOf(costliest.file).slice(0, 12)));
}

export async function tailShardInstructionsBench(): Promise<void> {
  await withCallgrindRanking(
    1_700_000_000_000,
    async ({ server, graph, clock }) => {
      await seed(server.url, clock);
      counting(server, true);
      for (const pass of ['first', 'again']) await measuredRead(server, graph, clock, pass);
    },
    {},
    ['--instr-atstart=no'],
  );
}
