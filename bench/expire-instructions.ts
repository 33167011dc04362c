/**
 * The scheduler's expire calls on the worst-case harness's crossing board in Redis instructions (issue
 * #45: the `JOB ranking-expiry` row, an expire call of 17–18 ms): `npm run bench --
 * --part expire-instructions`, a few minutes. redis-server runs under callgrind (startCallgrindRedis),
 * which counts the instructions it executes whatever else the machine does. wc-cross seeded as seed.ts
 * seeds it (8 minute windows keeping snapshots of 1 000 rows, 1 500 items in each of 8 segments), a
 * boundary crossed by a write naming the 8 segments (the harness's crossing row), then the scheduler's
 * passes after 2 idle weeks until the board is drained: each expire FCALL's instructions and commands.
 * EXPIRE_BENCH_ALL=1 lists every call past ~10 M instructions (EXPIRE_BENCH_OVER) with its costliest commands.
 * EXPIRE_BENCH_BOARD=wc-rated measures the harness's board of rated views instead (8 metrics of 8
 * windows, ties first, a wilson or controversial view of each window), EXPIRE_BENCH_ITEMS (300 here;
 * docs/security.md cites 60) items in each metric: its drains' weight of a field, by window (actor_lib's
 * drained_weight), and a visit's calls of the metrics still draining only.
 */
import { copyFileSync } from 'node:fs';
import { BOARDS } from '../harness/worst-case/boards';
import { composeRanking, type RankingGraph } from '../harness/compose-ranking';
import { validateConfig } from '../src/common/config';
import { RedisFunctions } from '../src/redis/redis-functions';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { optionsOf } from '../src/ranking/options/registry';
import { segmentsOf } from '../src/ranking/options/segments/segments.option';
import { ExpiryService } from '../src/ranking/expiry/expiry.service';
import { WriteCommands, type BatchInput } from '../src/ranking/writes/write-commands';
import { counting } from './redis-instructions';
import { perFcall, withCallgrindRanking, type CallgrindRanking } from './callgrind-ranking';

const RATED = process.env.EXPIRE_BENCH_BOARD === 'wc-rated';
/** seed.ts's crossing board at the `ci` size (EXPIRE_BENCH_ITEMS: fewer drain calls before the segments' listings). */
const ITEMS = Number(process.env.EXPIRE_BENCH_ITEMS ?? (RATED ? 300 : 1500));
const SEED_BATCH = 100;
const SEGMENTS = Array.from({ length: 8 }, (_, k) => `x${k}`);
/** EXPIRE_BENCH_IDLE_MS=60000: the scheduler's visit at the next boundary, the segments' marks still kept (their listings). */
const IDLE_MS = Number(process.env.EXPIRE_BENCH_IDLE_MS ?? 14 * 86_400_000);
const MOST_PASSES = Number(process.env.EXPIRE_BENCH_PASSES ?? 100);
/** Calls past it are listed with their costliest commands (EXPIRE_BENCH_ALL=1): the ~10 M bound of a call (#45). */
const OVER = Number(process.env.EXPIRE_BENCH_OVER ?? 10e6);
const SCRIPT_CLIENT = '?:0';
type Slowlog = Array<[number, number, number, string[], string]>;

/** The expire FCALLs' script commands, oldest first (a script's commands are logged before its call). */
function expireCommands(entries: Slowlog): Slowlog[] {
  const calls: Slowlog[] = [];
  let inCall: Slowlog = [];
  for (const entry of [...entries].reverse()) {
    if (entry[4] === SCRIPT_CLIENT) inCall.push(entry);
    else {
      if (/^fcall/i.test(String(entry[3][0])) && /_expire$/.test(String(entry[3][1]))) calls.push(inCall);
      inCall = [];
    }
  }
  return calls;
}

function byName(commands: Slowlog): string {
  const tally = new Map<string, number>();
  for (const [, , , argv] of commands) tally.set(argv[0].toLowerCase(), (tally.get(argv[0].toLowerCase()) ?? 0) + 1);
  return [...tally.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
}

/** The rated board, every metric's ITEMS items written at once (seed.ts's seedMetrics at a smaller size). */
async function seedRated({ graph, clock }: CallgrindRanking): Promise<void> {
  const commands = new WriteCommands(clock);
  const board = BOARDS['wc-rated'];
  const { windows, views, metrics } = board;
  await graph.ranking.putBoard({
    name: 'wc-rated',
    ...board,
    windows: [...windows],
    views: [...views],
    metrics: [...metrics],
  });
  for (const metric of metrics) {
    const entries = Array.from({ length: ITEMS }, (_, n) => ({ item: `i${n}`, amount: ITEMS - n, metric }));
    await graph.ranking.incrementBatch(commands.batch({ board: 'wc-rated', entries }));
  }
}

async function seed({ graph, clock }: CallgrindRanking): Promise<void> {
  const commands = new WriteCommands(clock);
  // As the controller reads a PUT's body (ranking.controller.ts putBoard).
  const { segments, ...body } = structuredClone(BOARDS['wc-cross']);
  await graph.ranking.putBoard({ name: 'wc-cross', ...body, ...optionsOf(segmentsOf(segments)) } as never);
  const batch = (entries: BatchInput[]) => graph.ranking.incrementBatch(commands.batch({ board: 'wc-cross', entries }));
  for (let first = 0; first < ITEMS; first += SEED_BATCH) {
    const count = Math.min(SEED_BATCH, ITEMS - first);
    await batch(
      Array.from({ length: count }, (_, k) => ({
        item: `i${first + k}`,
        amount: ITEMS - first - k,
        segments: SEGMENTS,
      })),
    );
  }
  clock.advanceMs(60_000);
  await batch([{ item: 'i1', amount: 1, segments: SEGMENTS }]);
}

/** The expiry of an instance at the default write bound (its expire calls' units), as the harness's scheduler. */
async function expirerOf({ server, clock }: CallgrindRanking) {
  const config = validateConfig({
    REDIS_URL: server.url,
    REDIS_COMMAND_TIMEOUT_MS: '60000',
    REDIS_AUTO_PIPELINING: 'false',
  });
  const service = new RedisService(RedisSettings.from(config), clock);
  await service.waitUntilReady(60_000);
  const functions = new RedisFunctions(service);
  const graph: RankingGraph = await composeRanking(service, functions, config, clock);
  // Its libraries loaded (again) before anything is counted: a load still under way would count in a call.
  await functions.onModuleInit();
  return { service, functions, expiry: graph.module.get(ExpiryService) };
}

/** The scheduler's passes until the board is drained: each expire call's instructions and script commands. */
async function measure(bench: CallgrindRanking): Promise<{ passes: number; expires: number[]; scripts: Slowlog[] }> {
  const { server, redis, clock } = bench;
  await redis.config('SET', 'slowlog-log-slower-than', '0');
  await redis.config('SET', 'slowlog-max-len', '1000000');
  await redis.slowlog('RESET');
  const { service, expiry } = await expirerOf(bench);
  counting(server, true);
  let passes = 0;
  const counted = await perFcall(server, async () => {
    for (let draining = true; draining && passes < MOST_PASSES; passes++) {
      const result = await expiry.expireDue({ leaseMs: 30_000, claimBatch: 100 });
      draining = result.stillDraining > 0;
      clock.advanceMs(1_000);
    }
  });
  counting(server, false);
  const keep = process.env.EXPIRE_BENCH_KEEP;
  counted.forEach(({ ir, file }, n) => keep && ir > OVER && copyFileSync(file, `${keep}/${n + 1}.cg`));
  await service.onApplicationShutdown();
  const expires = counted.filter(({ name }) => /(^|_)expire$/.test(name)).map(({ ir }) => ir);
  return { passes, expires, scripts: expireCommands((await redis.slowlog('GET', 1_000_000)) as Slowlog) };
}

function print({ passes, expires, scripts }: { passes: number; expires: number[]; scripts: Slowlog[] }): void {
  const m = (n: number) => (n / 1e6).toFixed(2);
  const costliest = expires.indexOf(Math.max(...expires));
  const total = expires.reduce((sum, n) => sum + n, 0);
  console.log(`passes ${passes}, expire calls ${expires.length}, ${m(total)} M in all`);
  const commands = scripts[costliest] ?? [];
  console.log(
    `costliest call ${costliest + 1}: ${m(expires[costliest])} M, ${commands.length} commands (${byName(commands)})`,
  );
  console.log(`most commands in a call: ${Math.max(...scripts.map((s) => s.length))}`);
  console.log(`calls (M): ${expires.map(m).join(', ')}`);
  expires.forEach((n, k) => {
    if (process.env.EXPIRE_BENCH_ALL && n > OVER)
      console.log(`  call ${k + 1} (${m(n)} M): ${scripts[k]?.length} commands: ${byName(scripts[k] ?? [])}`);
  });
}

export async function expireInstructionsBench(): Promise<void> {
  await withCallgrindRanking(
    1_700_000_000_000,
    async (bench) => {
      await (RATED ? seedRated : seed)(bench);
      bench.clock.advanceMs(IDLE_MS);
      print(await measure(bench));
    },
    // Seeded in calls of whole batches; the measured scheduler is an instance of its own (expirerOf).
    { WRITE_COST_PER_CALL: '1000000', REDIS_AUTO_PIPELINING: 'false' },
    // Counted inside FCALLs only: the server's cron, which a slow host runs more often during a call, is no call's work.
    ['--instr-atstart=no', '--toggle-collect=fcallCommand'],
  );
}
