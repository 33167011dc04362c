/**
 * The admin steps of the worst-case harness's board of every option in Redis instructions (issue #45:
 * steps of 6–8 ms a call): `npm run bench -- --part admin-step-instructions`, a few
 * minutes. redis-server runs under callgrind (startCallgrindRedis), which counts the instructions it
 * executes whatever else the machine does. wc-sum seeded as seed.ts seeds it at the `ci` size, then as
 * ADMIN_ROWS run on it: after two idle weeks an actor re-weighted, after two more an actor retracted
 * with a block, then a re-weighting's and an item retraction's first two steps. Each step of
 * adminStepUnits(WRITE_COST_PER_CALL) is counted per FCALL (a step sent again after a boundary it left
 * is two): its instructions and the commands its script ran. ADMIN_BENCH_MOST=<units> steps by other
 * units than a default instance's; ADMIN_BENCH_ALL=1 lists every call past ~15 M instructions with its
 * costliest commands (SLOWLOG's µs under valgrind: a share, and one the load moves);
 * ADMIN_BENCH_METRICS=1 also seeds wc-metrics and retracts an item of every metric to its end.
 */
import Redis from 'ioredis';
import { BOARDS, SIZES } from '../harness/worst-case/boards';
import { type RankingGraph } from '../harness/compose-ranking';
import { FakeClock } from '../harness/clock';
import { AppConfig } from '../src/common/config';
import { blockKeyOf } from '../src/common/names';
import { ActorWeightsStore } from '../src/ranking/actor-weights/actor-weights.store';
import { ledgerWindowOf } from '../src/ranking/core/ledger-window';
import { adminStepUnits } from '../src/ranking/core/write-cost';
import { RetractionStore, type RetractionKind } from '../src/ranking/retraction/retraction.store';
import { WriteCommands, type BatchInput } from '../src/ranking/writes/write-commands';
import { counting, type Callgrind } from './redis-instructions';
import { perFcall, withCallgrindRanking } from './callgrind-ranking';
import { putHarnessBoard } from './write-bench-seed';

const SIZE = SIZES.ci;
const SEED_BATCH = 200;
const IDLE_SEC = 14 * 86_400;
const MOST = Number(process.env.ADMIN_BENCH_MOST ?? adminStepUnits(new AppConfig().WRITE_COST_PER_CALL));
const MOST_STEPS = 400;
/** Calls past it are listed with their costliest commands (ADMIN_BENCH_ALL=1): ~5 ms of Redis. */
const OVER = 15e6;
/** The client address SLOWLOG gives the commands a script ran. */
const SCRIPT_CLIENT = '?:0';
type Slowlog = Array<[number, number, number, string[], string]>;

interface Bench {
  server: Callgrind;
  redis: Redis;
  graph: RankingGraph;
  clock: FakeClock;
}

/** One FCALL as SLOWLOG saw it: its µs (valgrind's: a share, not a time) and its script's commands. */
interface LoggedCall {
  us: number;
  commands: Slowlog;
}

/** Each FCALL with the commands its script ran, oldest first (a script's commands are logged before its call). */
function loggedCalls(entries: Slowlog): LoggedCall[] {
  const calls: LoggedCall[] = [];
  let inCall: Slowlog = [];
  for (const entry of [...entries].reverse()) {
    if (entry[4] === SCRIPT_CLIENT) inCall.push(entry);
    else if (/^fcall/i.test(String(entry[3][0]))) {
      calls.push({ us: entry[2], commands: inCall });
      inCall = [];
    } else inCall = [];
  }
  return calls;
}

/** A call's costliest commands by name, with the share of its time they took, and its commands' share. */
function shares(call: LoggedCall): string {
  const byName = new Map<string, { count: number; us: number }>();
  for (const [, , us, argv] of call.commands) {
    const name = argv[0].toLowerCase();
    const seen = byName.get(name) ?? { count: 0, us: 0 };
    byName.set(name, { count: seen.count + 1, us: seen.us + us });
  }
  const pct = (us: number) => Math.round((100 * us) / call.us);
  const costliest = [...byName.entries()].sort((a, b) => b[1].us - a[1].us).slice(0, 5);
  const inCommands = call.commands.reduce((sum, entry) => sum + entry[2], 0);
  const longest = [...call.commands].sort((a, b) => b[2] - a[2]).slice(0, 4);
  const named = longest.map(
    ([, , us, argv]) => `${argv.slice(0, 3).join(' ')}${argv.length > 3 ? ` …(${argv.length})` : ''} ${pct(us)} %`,
  );
  return `in commands ${pct(inCommands)} %: ${costliest.map(([name, { count, us }]) => `${name} ${count} (${pct(us)} %)`).join(', ')}; longest: ${named.join('; ')}`;
}

async function seed(bench: Bench): Promise<void> {
  const { graph, clock } = bench;
  const commands = new WriteCommands(clock);
  await putHarnessBoard(graph, 'wc-sum');
  const batches = async (count: number, entry: (n: number) => BatchInput) => {
    for (let first = 0; first < count; first += SEED_BATCH) {
      const entries = Array.from({ length: Math.min(SEED_BATCH, count - first) }, (_, k) => entry(first + k));
      await graph.ranking.incrementBatch(commands.batch({ board: 'wc-sum', entries }));
    }
  };
  const { items, actors, segments } = SIZE;
  await batches(items, (n) => ({
    item: `i${n}`,
    amount: items - n,
    actor: `a${n % actors}`,
    segments: [`s${n % segments}`],
  }));
  for (let boundary = 0; boundary < SIZE.snapshots; boundary++) {
    clock.advanceMs(60_000);
    await batches(8, (n) => ({ item: `i${n}`, amount: 1, actor: 'a0', segments: ['s0'] }));
  }
}

/** wc-metrics as seed.ts seeds it: every metric's items, then the last metric's snapshot boundaries. */
async function seedMetrics(bench: Bench): Promise<void> {
  const { graph, clock } = bench;
  const commands = new WriteCommands(clock);
  const { windows, views, metrics, ...rest } = BOARDS['wc-metrics'];
  await graph.ranking.putBoard({
    name: 'wc-metrics',
    ...rest,
    windows: [...windows],
    views: [...views],
    metrics: [...metrics],
  });
  const batch = async (entries: BatchInput[]) =>
    graph.ranking.incrementBatch(commands.batch({ board: 'wc-metrics', entries }));
  for (const metric of metrics)
    for (let first = 0; first < SIZE.items; first += SEED_BATCH)
      await batch(
        Array.from({ length: SEED_BATCH }, (_, k) => ({
          item: `i${first + k}`,
          amount: SIZE.items - first - k,
          metric,
        })),
      );
  for (let boundary = 0; boundary < SIZE.snapshots; boundary++) {
    clock.advanceMs(60_000);
    await batch(
      Array.from({ length: 8 }, (_, n) => ({ item: `i${n}`, amount: 1, metric: metrics[metrics.length - 1] })),
    );
  }
}

type Step = (first: boolean) => Promise<{ done: boolean }>;

/** Steps until done (or `steps` of them): each FCALL's instructions and script commands, printed as a row. */
async function measure(bench: Bench, label: string, step: Step, steps = MOST_STEPS): Promise<void> {
  const { server, redis } = bench;
  await redis.slowlog('RESET');
  counting(server, true);
  let taken = 0;
  const fcalls = await perFcall(server, async () => {
    for (let done = false; !done && taken < steps; taken++) done = (await step(taken === 0)).done;
  });
  const counted = fcalls.map(({ ir }) => ir);
  counting(server, false);
  const calls = loggedCalls((await redis.slowlog('GET', 1_000_000)) as Slowlog);
  const scripts = calls.map((call) => call.commands.length);
  const m = (n: number) => (n / 1e6).toFixed(2);
  const costliest = counted.indexOf(Math.max(...counted));
  console.log(
    `| ${label} | ${taken} | ${counted.length} | ${m(counted[0])} | ${m(Math.max(...counted))} | ${scripts[0]} | ${Math.max(...scripts)} |`,
  );
  console.log(`  calls (M): ${counted.map(m).join(', ')}; commands: ${scripts.join(', ')}`);
  console.log(`  first call: ${shares(calls[0])}`);
  console.log(`  costliest call (${costliest + 1}): ${shares(calls[costliest])}`);
  counted.forEach((n, k) => {
    if (process.env.ADMIN_BENCH_ALL && n > OVER) console.log(`  call ${k + 1} (${m(n)} M): ${shares(calls[k])}`);
  });
}

function retraction(bench: Bench, kind: RetractionKind, target: string, blockSec = 0, name = 'wc-sum'): Step {
  const store = bench.graph.module.get(RetractionStore);
  return async () => {
    const board = await bench.graph.cache.get(name);
    const nowMs = bench.clock.nowMs();
    return store.step(kind, board, board.shards[0], {
      id: `r-${target}`,
      target,
      most: MOST,
      ledgerWindow: ledgerWindowOf(board),
      blockUntilMs: blockSec > 0 ? nowMs + blockSec * 1000 : 0,
      blockKey: kind === 'actor' ? blockKeyOf(target) : target,
      nowMs,
    });
  };
}

function reweighting(bench: Bench, actor: string, weight: number): Step {
  const store = bench.graph.module.get(ActorWeightsStore);
  return async (fresh) => {
    const board = await bench.graph.cache.get('wc-sum');
    const nowMs = bench.clock.nowMs();
    const ledgerWindow = ledgerWindowOf(board);
    return store.step(board, board.shards[0], { actor, weight, most: MOST, ledgerWindow, fresh, places: 0, nowMs });
  };
}

export async function adminStepInstructionsBench(): Promise<void> {
  await withCallgrindRanking(
    1_700_000_000_000,
    async ({ server, redis, graph, clock }) => {
      const bench: Bench = { server, redis, graph, clock };
      await seed(bench);
      if (process.env.ADMIN_BENCH_METRICS) await seedMetrics(bench);
      await redis.config('SET', 'slowlog-log-slower-than', '0');
      await redis.config('SET', 'slowlog-max-len', '1000000');
      console.log(`adminStepUnits: ${MOST}`);
      console.log(
        '| admin step (wc-sum, ci) | steps | calls | first call (M instr.) | costliest call (M) | first call commands | costliest call commands |',
      );
      console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
      clock.advanceMs(IDLE_SEC * 1000);
      await measure(bench, 'an actor re-weighted to 100 after 2 idle weeks', reweighting(bench, 'a2', 100));
      clock.advanceMs(IDLE_SEC * 1000);
      await measure(
        bench,
        'an actor retracted, 400-day block, after 2 idle weeks',
        retraction(bench, 'actor', 'a1', 400 * 86_400),
      );
      await measure(bench, "a re-weighting's first two steps (a5 to 0)", reweighting(bench, 'a5', 0), 2);
      await measure(bench, "an item retraction's first two steps (i3)", retraction(bench, 'item', 'i3'), 2);
      if (process.env.ADMIN_BENCH_METRICS)
        await measure(bench, 'an item of every metric (wc-metrics)', retraction(bench, 'item', 'i1', 0, 'wc-metrics'));
    },
    { WRITE_COST_PER_CALL: '1000000', REDIS_AUTO_PIPELINING: 'false' },
    // Seeding counted nothing: Redis runs it several times faster.
    ['--instr-atstart=no'],
  );
}
